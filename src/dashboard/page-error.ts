// An error a dashboard page shows to the person using it: a status, a heading and a sentence on what to do.
export class PageError extends Error {
  constructor(readonly status: number, readonly title: string, message: string) {
    super(message);
  }

  /** What a team member gets for another team's page or resource: the same as for one that does not exist. */
  static notFound(): PageError {
    return new PageError(404, "Not found", "There is no such page, or it is not yours to see.");
  }

  static forbidden(message = "Only an operator can do that."): PageError {
    return new PageError(403, "Not allowed", message);
  }

  static badForm(message: string): PageError {
    return new PageError(400, "That did not work", message);
  }
}
