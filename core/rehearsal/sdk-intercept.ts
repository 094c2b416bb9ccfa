/**
 * How the rehearsal's emulations sit between the AWS backend and moto.
 * A middleware at the start of an SDK client's stack passes each command to moto or answers it itself.
 * Only the rehearsal's own clients get it, so the backend and the handlers run unchanged.
 */
import { RDSServiceException } from '@aws-sdk/client-rds';

export interface SdkResult {
  readonly output: Record<string, unknown>;
  readonly response?: unknown;
}

/** Calls moto with the input, possibly amended. */
export type Forward = (input?: Record<string, unknown>) => Promise<SdkResult>;

export type Interceptor = (command: string, input: Record<string, unknown>, forward: Forward) => Promise<SdkResult>;

interface HasMiddlewareStack {
  readonly middlewareStack: { add(middleware: unknown, options: Record<string, unknown>): void };
}

type Handler = (args: { input: Record<string, unknown> }) => Promise<SdkResult>;

export function interceptClient(client: HasMiddlewareStack, name: string, interceptor: Interceptor): void {
  const middleware =
    (next: Handler, context: { commandName?: string }) => async (args: { input: Record<string, unknown> }) =>
      interceptor(context.commandName?.replace(/Command$/, '') ?? '', args.input, (input) =>
        next(input ? { ...args, input } : args),
      );
  client.middlewareStack.add(middleware, { step: 'initialize', name, override: true });
}

/** An answer that never went to moto, shaped as the SDK returns one. */
export function answer(output: Record<string, unknown>): SdkResult {
  return { output: { $metadata: { httpStatusCode: 200 }, ...output }, response: {} };
}

/** An error as the SDK raises a service's error response, named by the error code. */
export function serviceError(
  code: string,
  message: string,
  ExceptionClass: typeof RDSServiceException = RDSServiceException,
): Error {
  return new ExceptionClass({ name: code, $fault: 'client', $metadata: { httpStatusCode: 400 }, message });
}
