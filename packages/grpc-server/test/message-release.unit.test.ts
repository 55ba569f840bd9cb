import { describe, expect, it } from '@jest/globals';
import { grpcFrame } from '../../../test/support/raw-http2.js';
import { MessageAssembler } from '../src/message-assembly.js';

// A message left unfinished when its call ends is given back at once, not at the next garbage
// collection (which an idle process does not run).

describe('MessageAssembler.release', () => {
  it("should give back an unfinished message's buffer at once: 100 of 512 KiB leave no external memory behind, without a garbage collection", () => {
    const announced = grpcFrame(Buffer.alloc(512 * 1024, 'n')).subarray(0, 64 * 1024);
    const assemblers = Array.from({ length: 100 }, () => new MessageAssembler(1024 * 1024, { reserve: () => true, message: () => undefined }));
    const before = process.memoryUsage().arrayBuffers;
    for (const assembler of assemblers) expect(assembler.push(announced)).toBeUndefined();
    const held = process.memoryUsage().arrayBuffers;
    for (const assembler of assemblers) assembler.release();
    const after = process.memoryUsage().arrayBuffers;
    // Measured as what the releases give back (nothing allocates meanwhile, so no collection runs):
    // the 50 MiB the pushes allocate may start a collection that frees other buffers of the process.
    expect(held - after).toBeGreaterThanOrEqual(100 * 512 * 1024);
    expect(after - before).toBeLessThan(512 * 1024);
    expect(assemblers.every((assembler) => assembler.complete)).toBe(true);
  });

  it('should leave a message already delivered, and small ones from the shared pool, untouched', () => {
    const delivered: Buffer[] = [];
    const assembler = new MessageAssembler(1024 * 1024, { reserve: () => true, message: (bytes) => void delivered.push(bytes) });
    const framed = grpcFrame(Buffer.alloc(100 * 1024, 'd'));
    assembler.push(framed.subarray(0, 50_000));
    assembler.push(framed.subarray(50_000));
    assembler.release();
    expect(delivered[0]!.length).toBe(100 * 1024);
    const small = new MessageAssembler(1024 * 1024, { reserve: () => true, message: () => undefined });
    small.push(grpcFrame(Buffer.alloc(100, 's')).subarray(0, 50));
    small.release();
    expect(Buffer.allocUnsafe(10).buffer.byteLength).toBeGreaterThan(0); // the shared pool is not detached
  });
});
