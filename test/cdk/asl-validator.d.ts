/** asl-validator 4 ships no types: the part the tests use. */
declare module 'asl-validator' {
  interface AslValidationResult {
    readonly isValid: boolean;
    readonly errors: readonly { readonly 'Error code': string; readonly Message: string }[];
    /** A closure over the result (the tests destructure it). */
    readonly errorsText: (separator?: string) => string;
  }
  function aslValidator(
    definition: unknown,
    options?: { checkPaths?: boolean; checkArn?: boolean },
  ): AslValidationResult;
  export = aslValidator;
}
