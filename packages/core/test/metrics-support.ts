/** Reading Prometheus's text exposition format 0.0.4 back in tests. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** `# TYPE` of each metric family. */
  types: Map<string, string>;
}

/** Parses the text format; throws on a line that is not a comment, a sample or empty. */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1], type[2]);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2] !== undefined)
      for (const l of m[2].matchAll(/(\w+)="((?:[^"\\]|\\.)*)",?/g))
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) });
  }
  return { samples, types };
}

/** The one sample of `name` whose labels include `labels`; undefined when there is none. */
export function sample(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
