// The Hub's fixed error answers: {"error":{"code","message"}} with a stable lowercase code. Messages are
// fixed sentences or validation summaries: never stack traces, file paths or token material.

export class HubError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HubError';
  }
}

export const unauthenticated = () => new HubError(401, 'unauthenticated', 'missing, unknown or revoked workspace token');
export const invalidRequest = (message: string) => new HubError(400, 'invalid_request', message.slice(0, 400));
export const notFoundError = (code: string, message: string) => new HubError(404, code, message);
