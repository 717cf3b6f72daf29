import { formatIssue, type Issue } from "./issues.js";

export type ManifestErrorCode = "invalid-manifest" | "invalid-catalogue" | "invalid-membership";

/** Thrown by the `parseX` functions; `issues` lists every problem with its path. */
export class ManifestError extends Error {
  readonly code: ManifestErrorCode;
  readonly issues: readonly Issue[];
  constructor(code: ManifestErrorCode, what: string, issues: readonly Issue[]) {
    super(
      `${what} has ${issues.length} problem${issues.length === 1 ? "" : "s"}:\n${issues.map((issue) => `  - ${formatIssue(issue)}`).join("\n")}`,
    );
    this.name = "ManifestError";
    this.code = code;
    this.issues = issues;
  }
}
