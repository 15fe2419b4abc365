// One drizzle migration as the generated modules embed it (build/migrations-module.ts writes them), so a compiled binary needs no SQL files on disk.
export interface EmbeddedMigration {
  tag: string;
  when: number;
  breakpoints: boolean;
  sql: string;
}
