/** Renders `{{variable}}` placeholders; unknown variables become empty text. */
export function renderTemplate(
  template: string,
  values: Record<string, string | number | boolean | null | undefined>,
): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (_, name: string) => {
    const value = values[name];
    return value === null || value === undefined ? '' : String(value);
  });
}
