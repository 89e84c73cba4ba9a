/** One sample of a Prometheus text exposition. */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition: samples, and the declared type of each metric family. */
export interface PrometheusText {
  samples: PrometheusSample[];
  types: Record<string, string>;
  /** The value of the one sample named `name` whose labels include `labels`; throws otherwise. */
  value(name: string, labels?: Record<string, string>): number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/**
 * Parses the Prometheus text format (version 0.0.4) strictly enough to catch what a scraper
 * would refuse: every line a comment, `# HELP`/`# TYPE` or `name{labels} value`; label values
 * quoted and escaped; each sample's family declared with a known type before it.
 */
export function parsePrometheusText(text: string): PrometheusText {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const samples: PrometheusSample[] = [];
  const types: Record<string, string> = {};
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, index) => {
      const where = `line ${index + 1} (${JSON.stringify(line)})`;
      if (line.startsWith('# TYPE ')) {
        const [name, type] = line.slice(7).split(' ');
        if (name === undefined || type === undefined || !TYPES.has(type)) {
          throw new Error(`${where}: bad TYPE`);
        }
        types[name] = type;
        return;
      }
      if (line.startsWith('#')) return;
      const match = SAMPLE.exec(line);
      if (match === null) throw new Error(`${where}: not a sample`);
      const [, name, labelText, valueText] = match;
      const labels: Record<string, string> = {};
      if (labelText !== undefined && labelText !== '') {
        LABEL.lastIndex = 0;
        while (LABEL.lastIndex < labelText.length) {
          const label = LABEL.exec(labelText);
          if (label === null) throw new Error(`${where}: bad labels`);
          labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, character: string) =>
            character === 'n' ? '\n' : character,
          );
        }
      }
      const value = valueText === '+Inf' ? Infinity : Number(valueText);
      if (Number.isNaN(value)) throw new Error(`${where}: bad value`);
      const family = name!.replace(/_(bucket|sum|count)$/, '');
      if (types[name!] === undefined && types[family] === undefined) {
        throw new Error(`${where}: no TYPE for ${name}`);
      }
      samples.push({ name: name!, labels, value });
    });
  return {
    samples,
    types,
    value(name, labels = {}) {
      const found = samples.filter(
        (sample) =>
          sample.name === name &&
          Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
      );
      if (found.length !== 1) {
        throw new Error(`${found.length} samples named ${name} ${JSON.stringify(labels)}`);
      }
      return found[0]!.value;
    },
  };
}
