// oidc-provider ships no types (DefinitelyTyped has them, which the tests do not need): the little they use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type Account = { accountId: string; claims(): Promise<Record<string, unknown>> | Record<string, unknown> };

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
