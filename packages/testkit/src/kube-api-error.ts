/**
 * The error of the local Kubernetes API server: a refused request with the HTTP status code and the
 * `reason` Kubernetes puts in its `Status` body (NotFound, Conflict, Forbidden, Invalid...).
 */

/** A refused request, as Kubernetes answers it (`code`, `reason`, `message` of a `Status`). */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "KubeApiError";
  }
}
