// Dashboard user names: lowercase letters, digits and . _ - @ (an e-mail address serves), compared case-insensitively.
const USERNAME = /^[a-z0-9][a-z0-9._@-]{0,63}$/;

/** The stored form of a name, or null when it is not a valid user name. */
export function normalUsername(name: string): string | null {
  const n = name.trim().toLowerCase();
  return USERNAME.test(n) ? n : null;
}

export const USERNAME_RULE = "a user name is 1-64 characters: letters, digits and . _ - @, starting with a letter or digit";
