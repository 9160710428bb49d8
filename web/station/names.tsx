/** Long names (snapshot files, instance IDs) laid out so they wrap where a reader expects. */

/** A snapshot file name that may wrap after its `__` separators. */
export function breakable(name: string) {
  return name.split('__').flatMap((part, i) => (i === 0 ? [part] : [<wbr key={i} />, `__${part}`]));
}

export function Filename({ name }: { name: string }) {
  return <code class="filename">{breakable(name)}</code>;
}
