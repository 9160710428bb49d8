// GET /metrics for tests: fetches with a bearer token or a session and parses the Prometheus
// text format strictly (prom-client has no parser): every line must be a HELP, a TYPE or a
// sample of a family declared before it, or the parse fails naming the line.
import assert from 'node:assert/strict';
import { type Client, mintAutomationToken, userClient } from './http.ts';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  samples: Sample[];
}

export type Metrics = Map<string, Family>;

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const HELP = new RegExp(`^# HELP (${NAME}) (.*)$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(?:,|$)/;
const SUFFIXES: Record<string, string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

/** A sample value as Prometheus reads it (Go's ParseFloat: Inf and NaN in any case). */
function parseValue(text: string, line: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN; // prom-client writes `Nan` for an empty lag gauge
  assert.match(text, /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/, `bad sample value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string | undefined, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text ?? '';
  while (rest !== '') {
    const match = LABEL.exec(rest);
    assert.ok(match?.[1] !== undefined && match[2] !== undefined, `bad labels in: ${line}`);
    assert.equal(labels[match[1]], undefined, `label ${match[1]} repeated in: ${line}`);
    labels[match[1]] = match[2].replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(match[0].length);
  }
  return labels;
}

/** Parses the text format; throws (an assertion error naming the line) on anything else. */
export function parseMetrics(text: string): Metrics {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  const families: Metrics = new Map();
  const helps = new Map<string, string>();
  let current: Family | null = null;
  for (const line of text.slice(0, -1).split('\n')) {
    const help = HELP.exec(line);
    const type = TYPE.exec(line);
    const sample = SAMPLE.exec(line);
    if (line === '') {
      // the format allows empty lines (prom-client puts one between families)
    } else if (help?.[1] && help[2] !== undefined) {
      assert.ok(!helps.has(help[1]), `HELP for ${help[1]} given twice`);
      helps.set(help[1], help[2]);
    } else if (type?.[1] && type[2]) {
      assert.ok(!families.has(type[1]), `TYPE for ${type[1]} given twice`);
      current = { name: type[1], help: helps.get(type[1]) ?? '', type: type[2], samples: [] };
      families.set(type[1], current);
    } else if (sample?.[1] && sample[3]) {
      const family = current;
      assert.ok(family, `sample before any TYPE: ${line}`);
      const suffix = sample[1].slice(family.name.length);
      assert.ok(
        sample[1].startsWith(family.name) && (SUFFIXES[family.type] ?? ['']).includes(suffix),
        `sample ${sample[1]} outside its family ${family.name}: ${line}`,
      );
      family.samples.push({
        name: sample[1],
        labels: parseLabels(sample[2], line),
        value: parseValue(sample[3], line),
      });
    } else {
      assert.fail(`not a line of the Prometheus text format: ${JSON.stringify(line)}`);
    }
  }
  return families;
}

/** The value of the sample of `name` whose labels are exactly `labels`, or undefined. */
export function sampleValue(metrics: Metrics, name: string, labels: Record<string, string> = {}) {
  const family = metrics.get(name);
  const want = JSON.stringify(Object.entries(labels).sort());
  return family?.samples.find(
    (s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want,
  )?.value;
}

/** GET /metrics with a bearer token or through a session client, expecting 200; parsed. */
export async function scrape(target: { url: string; token: string } | Client): Promise<Metrics> {
  const reply =
    'token' in target
      ? await fetch(`${target.url}/metrics`, { headers: { authorization: `Bearer ${target.token}` } }).then(
          async (res) => ({ status: res.status, headers: res.headers, text: await res.text() }),
        )
      : await target.get('/metrics');
  assert.equal(reply.status, 200, reply.text);
  assert.match(reply.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseMetrics(reply.text);
}

/**
 * Who may not read /metrics though signed in (both roles): an automation token without the
 * `read` scope (403 naming it) and a user who is not an admin (403). `outsider` has no session.
 */
export async function assertMetricsRefused(outsider: Client, admin: Client): Promise<void> {
  const wrongScope = await outsider.get('/metrics', {
    token: await mintAutomationToken(admin, ['backup']),
  });
  assert.equal(wrongScope.status, 403);
  assert.match(wrongScope.body.detail, /"read" scope/);
  const user = await userClient(admin, 'metrics-viewer', 'first password 1');
  const notAdmin = await user.get('/metrics');
  assert.equal(notAdmin.status, 403);
  assert.match(notAdmin.body.detail, /admin/);
}
