/** `scout_id`, `scout_instance_id` and `job_name`: 1–64 of A-Z a-z 0-9 . _ -, not starting with '.'. */
const COMPONENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

export function isNamespaceComponent(value: string): boolean {
  return COMPONENT.test(value);
}

export const NAMESPACE_RULE = '1 to 64 characters of A-Z a-z 0-9 . _ -, not starting with "."';
