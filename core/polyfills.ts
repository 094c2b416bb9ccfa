/**
 * aws-local-stepfunctions 3.x calls Promise.withResolvers (Node >= 22). Debian's and this
 * project's CI Node is 20, so provide it here; imported first by every entry point.
 */
type Resolvers<T> = {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
};

const promiseCtor = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
if (typeof promiseCtor.withResolvers !== 'function') {
  promiseCtor.withResolvers = function withResolvers<T>(): Resolvers<T> {
    let resolve!: Resolvers<T>['resolve'];
    let reject!: Resolvers<T>['reject'];
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

export {};
