// What the global setup (test/support/global-setup.ts) provides to every test file, read with
// vitest's inject().

/** Whether python3 imports torch, and torch.distributed with the gloo backend. */
export interface TorchFound {
  torch: boolean;
  gloo: boolean;
}

declare module 'vitest' {
  export interface ProvidedContext {
    torchFound: TorchFound;
    /** A scratch folder for this test run, made by the global setup and removed after the last file. */
    testRunDir: string;
  }
}
