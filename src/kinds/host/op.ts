/** A host function (cudaLaunchHostFunc) over the chunk's output bytes on the host, after its D2H. */
export type HostOp = {
  readonly kind: 'host';
  readonly stream: string;
  readonly name: string;
  readonly chunk: number | null;
};
