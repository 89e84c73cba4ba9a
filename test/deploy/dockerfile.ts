import { posix } from 'node:path';

/** One Dockerfile instruction, continuation lines joined. */
export interface DockerInstruction {
  /** Upper-case keyword: `FROM`, `RUN`, `COPY`, … */
  keyword: string;
  /** Everything after the keyword, global ARGs substituted. */
  args: string;
  /** 1-based line where the instruction starts. */
  line: number;
}

/** A build stage: one `FROM` and the instructions up to the next. */
export interface DockerStage {
  /** The `AS` name, if any. */
  name: string | undefined;
  /** The base image after ARG substitution. */
  image: string;
  instructions: DockerInstruction[];
}

/** A parsed Dockerfile. */
export interface Dockerfile {
  /** ARGs declared before the first FROM, with their defaults. */
  globalArgs: Record<string, string>;
  stages: DockerStage[];
}

/** A HEALTHCHECK instruction: its options (`interval` → `10s`) and its command. */
export interface DockerHealthcheck {
  options: Record<string, string>;
  /** The command in exec form, or `['/bin/sh', '-c', text]` for the shell form. */
  command: string[];
}

/**
 * Parses a Dockerfile: comments and blank lines dropped, `\` continuations joined, global ARG
 * defaults substituted (`${NAME}` and `$NAME`) so `FROM ${NODE_IMAGE}` shows the real image.
 */
export function parseDockerfile(text: string): Dockerfile {
  const globalArgs: Record<string, string> = {};
  const stages: DockerStage[] = [];
  const substitute = (value: string): string =>
    value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
      (match, braced?: string, bare?: string) => globalArgs[(braced ?? bare)!] ?? match,
    );
  for (const instruction of logicalLines(text)) {
    if (instruction.keyword === 'FROM') {
      const [image, as, name] = substitute(instruction.args).split(/\s+/);
      stages.push({
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        image: image!,
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (instruction.keyword === 'ARG') {
        const [name, value] = instruction.args.split('=', 2);
        globalArgs[name!.trim()] = value?.trim() ?? '';
      }
    } else {
      stages.at(-1)!.instructions.push({ ...instruction, args: substitute(instruction.args) });
    }
  }
  return { globalArgs, stages };
}

/** The stage with that `AS` name; throws when there is none. */
export function stageNamed(dockerfile: Dockerfile, name: string): DockerStage {
  const stage = dockerfile.stages.find((candidate) => candidate.name === name);
  if (stage === undefined) throw new Error(`the Dockerfile has no stage named ${name}`);
  return stage;
}

/** The stage's instructions with one keyword. */
export function instructionsOf(stage: DockerStage, keyword: string): DockerInstruction[] {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword);
}

/** The last instruction with that keyword in the stage (the one Docker keeps), if any. */
export function lastInstruction(
  stage: DockerStage,
  keyword: string,
): DockerInstruction | undefined {
  return instructionsOf(stage, keyword).at(-1);
}

/** The arguments in exec form (`["a", "b"]`), or `undefined` when written in shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.trimStart().startsWith('[')) return undefined;
  const value: unknown = JSON.parse(args);
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new Error(`not a JSON list of strings: ${args}`);
  }
  return value;
}

/** Splits a HEALTHCHECK instruction into its `--name=value` options and its command. */
export function parseHealthcheck(args: string): DockerHealthcheck {
  const options: Record<string, string> = {};
  let rest = args.trim();
  for (let option = /^--([a-z-]+)=(\S+)\s+/.exec(rest); option !== null;) {
    options[option[1]!] = option[2]!;
    rest = rest.slice(option[0].length);
    option = /^--([a-z-]+)=(\S+)\s+/.exec(rest);
  }
  if (!rest.startsWith('CMD')) throw new Error(`HEALTHCHECK without CMD: ${args}`);
  const commandText = rest.slice('CMD'.length).trim();
  return { options, command: execForm(commandText) ?? ['/bin/sh', '-c', commandText] };
}

/** Docker's duration syntax (`3s`, `1m30s`, `500ms`) in milliseconds. */
export function durationMilliseconds(text: string): number {
  const units: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  const rest = text.replace(/(\d+(?:\.\d+)?)(ms|s|m|h)/g, (_, amount: string, unit: string) => {
    total += Number(amount) * units[unit]!;
    return '';
  });
  if (rest !== '' || text === '') throw new Error(`not a duration: ${text}`);
  return total;
}

/** Resolves a path written in a stage against the WORKDIR in force at that point. */
export function resolveInStage(workdir: string, path: string): string {
  return posix.resolve(workdir, path);
}

function logicalLines(text: string): { keyword: string; args: string; line: number }[] {
  const lines = text.split(/\r?\n/);
  const instructions: { keyword: string; args: string; line: number }[] = [];
  let pending: { parts: string[]; line: number } | undefined;
  for (const [index, raw] of lines.entries()) {
    const trimmed = raw.trim();
    // Docker skips blank and comment lines, also between continuation lines.
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const continues = trimmed.endsWith('\\');
    const part = continues ? trimmed.slice(0, -1).trim() : trimmed;
    if (pending === undefined) pending = { parts: [part], line: index + 1 };
    else pending.parts.push(part);
    if (!continues) {
      const joined = pending.parts.join(' ');
      const [keyword] = joined.split(/\s/, 1);
      instructions.push({
        keyword: keyword!.toUpperCase(),
        args: joined.slice(keyword!.length).trim(),
        line: pending.line,
      });
      pending = undefined;
    }
  }
  return instructions;
}
