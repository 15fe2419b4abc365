// A browser stand-in for dashboard tests through app.handle: keeps cookies, finds the CSRF field of the last page,
// and signs in through the real form. Accounts are made with the same repository calls `kiln users add` makes.
import type { Db } from "../../src/db/client.ts";
import { createUser, type Role } from "../../src/db/dashboard-users-repo.ts";
import { hashPassword } from "../../src/dashboard/accounts/password.ts";

export async function addUser(db: Db, username: string, role: Role, teamId: number | null, password = `${username}-password-1`): Promise<string> {
  await createUser(db, { username, passwordHash: await hashPassword(password), role, teamId });
  return password;
}

export interface PageAnswer {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/** The value of hidden input `name` in a page, or null. */
export function hiddenField(text: string, name: string): string | null {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(text)?.[1] ?? null;
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();
  last = "";

  constructor(private readonly handle: (r: Request) => Promise<Response>, private readonly origin = "http://kiln.test") {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private async send(path: string, init: RequestInit): Promise<PageAnswer> {
    const headers = new Headers(init.headers);
    if (this.cookies.size && !headers.has("cookie")) headers.set("cookie", this.cookieHeader());
    const res = await this.handle(new Request(this.origin + path, { ...init, headers }));
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/.test(c) || !value) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    if (res.headers.get("content-type")?.startsWith("text/html")) this.last = text;
    return { status: res.status, headers: res.headers, text, location: res.headers.get("location") };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<PageAnswer> {
    return this.send(path, { headers });
  }

  /** Posts a form; `_csrf` (or `_login` on the sign-in form) is taken from the last page unless given. */
  post(path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<PageAnswer> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    for (const token of ["_csrf", "_login"]) {
      const found = hiddenField(this.last, token);
      if (!(token in fields) && found !== null) body.set(token, found);
    }
    return this.send(path, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
  }

  /**
   * Signs in through the form and, when that worked, opens the page it leads to (as a browser would, so the next
   * post finds that page's CSRF field); returns the answer to the sign-in post (a 303 into the dashboard).
   */
  async signIn(username: string, password: string): Promise<PageAnswer> {
    await this.get("/dashboard/login");
    const answer = await this.post("/dashboard/login", { username, password, next: "/dashboard" });
    let location = answer.status === 303 ? answer.location : null;
    for (let hops = 0; location && hops < 5; hops++) {
      const next = await this.get(location);
      location = next.status === 303 ? next.location : null;
    }
    return answer;
  }
}
