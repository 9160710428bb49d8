import { keepWasmOnBaselineCompiler } from '../core/wasm-baseline.ts';
import { keepOldGenerationTight } from './old-generation.ts';
import { keepYoungGenerationSmall } from './young-generation.ts';

/**
 * The V8 settings a Scout runs with, set at its start (src/cli/scout-serve.ts): a young
 * generation kept small (young-generation.ts), an old generation with little room to grow
 * (old-generation.ts), and WebAssembly kept on the baseline compiler
 * (src/core/wasm-baseline.ts). The Scout's only WebAssembly is the HTTP parser of Node's
 * `fetch` (undici's llhttp, used to talk to the Station); V8 re-compiled it with TurboFan in
 * the background during the first backup, and that compilation's 7.1 MiB zone, freed, raised
 * glibc's mmap threshold to 7.1 MiB and so its trim threshold to 14.3 MiB: from then on every
 * thread's malloc arena kept up to 14 MiB free at its top, which neither glibc nor malloc_trim
 * returns (seen in gdb on mp_.mmap_threshold; the compiling thread's arena stayed at 10-14 MiB
 * resident). Measured (dist, backup, own restore, four backups, 3 s idle): 0.25 GiB idle 142-149
 * -> 137 MiB, peak of five 180-187 -> 175; 1 GiB idle 156-158 -> 152, peak 196-205 -> 186.
 */
export function applyScoutV8Settings(): void {
  keepYoungGenerationSmall();
  keepOldGenerationTight();
  keepWasmOnBaselineCompiler();
}
