import { setFlagsFromString } from 'node:v8';

/**
 * Keeps PGlite's WebAssembly (the whole PostgreSQL server, ~9 MB of wasm) on V8's baseline
 * compiler, Liftoff. By default V8 re-compiles hot wasm functions with TurboFan in the
 * background, and optimising PostgreSQL's largest functions (the parser, the expression
 * interpreter) takes ~500 MB of compiler memory for a moment: measured, a Station's peak
 * resident memory was 740–900 MB while it idled at 230–380 MB. With Liftoff only the peak is
 * the idle size (~170–190 MB), the Station's queries run as fast (they wait on the JS side of
 * PGlite, not in the optimised code), and initdb on a fresh data dir takes 3 s instead of 5.
 *
 * The Scout keeps its WebAssembly (Node's fetch parser) there too, for its memory
 * (src/scout/v8-settings.ts).
 *
 * Set at run time so that every way of starting backupd (node with the source or the bundle,
 * the single executable, the initdb child) gets it; must run before PGlite's wasm is compiled.
 * Flags set after start-up do not apply their implications, so `--liftoff-only`'s two are
 * spelled out (without them V8 still tiers up).
 */
export function keepWasmOnBaselineCompiler(): void {
  setFlagsFromString('--liftoff-only --no-wasm-tier-up --no-wasm-dynamic-tiering');
}
