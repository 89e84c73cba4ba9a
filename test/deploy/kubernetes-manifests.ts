import { posix } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readRepoText, readRepoYaml, repoFileExists } from './repo-files.js';
import {
  isYamlMap,
  listAt,
  mapAt,
  numberAt,
  optionalMapAt,
  stringAt,
  stringListAt,
  type YamlMap,
} from './yaml-shape.js';

/** The kustomize base of deploy/kubernetes. */
export const KUSTOMIZE_DIR = 'deploy/kubernetes';

/** What the base's kustomization.yaml says. */
export interface Kustomization {
  namespace: string | undefined;
  /** Repository paths of the manifests it lists. */
  resources: string[];
  /** Generated ConfigMaps: name → key → repository path of the file. */
  configMaps: Record<string, Record<string, string>>;
  /** `images:` entries: image name → tag. */
  images: Record<string, string>;
}

/** One Kubernetes object of a manifest. */
export interface KubernetesObject {
  /** Repository path of the manifest it came from. */
  file: string;
  apiVersion: string;
  kind: string;
  name: string;
  raw: YamlMap;
}

/** A container of a pod template, shaped for checks. */
export interface PodContainer {
  name: string;
  /** An init container (`restartPolicy: Always` makes it a native sidecar). */
  init: boolean;
  image: string;
  command: string[];
  args: string[];
  /** Environment variables: a literal value, or where it comes from. */
  env: Record<string, { value?: string; secret?: { name: string; key: string } }>;
  /** Container ports by name (unnamed ones by their number). */
  ports: Record<string, number>;
  raw: YamlMap;
}

/** Reads deploy/kubernetes/kustomization.yaml. */
export function loadKustomization(): Kustomization {
  const file = `${KUSTOMIZE_DIR}/kustomization.yaml`;
  const root = mapAt(readRepoYaml(file), file);
  const inBase = (path: string): string => posix.normalize(posix.join(KUSTOMIZE_DIR, path));
  const configMaps: Kustomization['configMaps'] = {};
  for (const [index, entry] of listAt(
    root.configMapGenerator ?? [],
    `${file}: configMapGenerator`,
  ).entries()) {
    const generator = mapAt(entry, `${file}: configMapGenerator[${index}]`);
    const files: Record<string, string> = {};
    for (const source of stringListAt(
      generator.files,
      `${file}: configMapGenerator[${index}].files`,
    )) {
      const [key, path] = source.includes('=')
        ? source.split('=', 2)
        : [posix.basename(source), source];
      files[key!] = inBase(path!);
    }
    configMaps[stringAt(generator.name, `${file}: configMapGenerator[${index}].name`)] = files;
  }
  const images: Record<string, string> = {};
  for (const [index, entry] of listAt(root.images ?? [], `${file}: images`).entries()) {
    const image = mapAt(entry, `${file}: images[${index}]`);
    images[stringAt(image.name, `${file}: images[${index}].name`)] = String(image.newTag);
  }
  return {
    namespace:
      root.namespace === undefined ? undefined : stringAt(root.namespace, `${file}: namespace`),
    resources: stringListAt(root.resources, `${file}: resources`).map(inBase),
    configMaps,
    images,
  };
}

/** Every object of every manifest the kustomization lists; throws naming the file when one is malformed. */
export function loadManifests(kustomization: Kustomization): KubernetesObject[] {
  return kustomization.resources.flatMap((file) => {
    if (!repoFileExists(file))
      throw new Error(`${file} is listed in kustomization.yaml but missing`);
    return parseAllDocuments(readRepoText(file)).map((document, index) => {
      const where = `${file} (document ${index + 1})`;
      if (document.errors.length > 0) throw new Error(`${where}: ${document.errors[0]!.message}`);
      const raw = mapAt(document.toJS(), where);
      const metadata = mapAt(raw.metadata, `${where}: metadata`);
      return {
        file,
        apiVersion: stringAt(raw.apiVersion, `${where}: apiVersion`),
        kind: stringAt(raw.kind, `${where}: kind`),
        name: stringAt(metadata.name, `${where}: metadata.name`),
        raw,
      };
    });
  });
}

/** The object of that kind and name; throws listing what exists when there is none. */
export function objectNamed(
  objects: readonly KubernetesObject[],
  kind: string,
  name: string,
): KubernetesObject {
  const found = objects.find((object) => object.kind === kind && object.name === name);
  if (found === undefined) {
    const names = objects.filter((object) => object.kind === kind).map((object) => object.name);
    throw new Error(
      `no ${kind} ${name} in ${KUSTOMIZE_DIR} (there are: ${names.join(', ') || 'none'})`,
    );
  }
  return found;
}

/** A workload's pod template: `spec.template`. */
export function podTemplateOf(workload: KubernetesObject): YamlMap {
  return mapAt(
    mapAt(workload.raw.spec, `${workload.name}: spec`).template,
    `${workload.name}: spec.template`,
  );
}

/** The containers and init containers of a workload's pod template. */
export function containersOf(workload: KubernetesObject): PodContainer[] {
  const spec = mapAt(podTemplateOf(workload).spec, `${workload.name}: pod spec`);
  const shape = (entry: unknown, init: boolean, index: number): PodContainer => {
    const where = `${workload.file}: ${workload.name} ${init ? 'initContainers' : 'containers'}[${index}]`;
    const raw = mapAt(entry, where);
    const env: PodContainer['env'] = {};
    for (const [envIndex, variable] of listAt(raw.env ?? [], `${where}.env`).entries()) {
      const item = mapAt(variable, `${where}.env[${envIndex}]`);
      const name = stringAt(item.name, `${where}.env[${envIndex}].name`);
      const from = optionalMapAt(item.valueFrom, `${where}.env.${name}.valueFrom`);
      const secret = isYamlMap(from.secretKeyRef) ? from.secretKeyRef : undefined;
      env[name] =
        secret === undefined
          ? item.value === undefined
            ? {}
            : { value: typeof item.value === 'string' ? item.value : JSON.stringify(item.value) }
          : {
              secret: {
                name: stringAt(secret.name, `${where}.env.${name}`),
                key: stringAt(secret.key, `${where}.env.${name}`),
              },
            };
    }
    const ports: Record<string, number> = {};
    for (const [portIndex, port] of listAt(raw.ports ?? [], `${where}.ports`).entries()) {
      const item = mapAt(port, `${where}.ports[${portIndex}]`);
      const number = numberAt(item.containerPort, `${where}.ports[${portIndex}].containerPort`);
      ports[
        item.name === undefined
          ? String(number)
          : stringAt(item.name, `${where}.ports[${portIndex}].name`)
      ] = number;
    }
    return {
      name: stringAt(raw.name, `${where}.name`),
      init,
      image: stringAt(raw.image, `${where}.image`),
      command: raw.command === undefined ? [] : stringListAt(raw.command, `${where}.command`),
      args: raw.args === undefined ? [] : stringListAt(raw.args, `${where}.args`),
      env,
      ports,
      raw,
    };
  };
  return [
    ...listAt(spec.initContainers ?? [], 'initContainers').map((entry, index) =>
      shape(entry, true, index),
    ),
    ...listAt(spec.containers, 'containers').map((entry, index) => shape(entry, false, index)),
  ];
}

/** The container port a probe or Service `targetPort` names (by name or number), or `undefined`. */
export function resolvePort(container: PodContainer, port: unknown): number | undefined {
  if (typeof port === 'number')
    return Object.values(container.ports).includes(port) ? port : undefined;
  return typeof port === 'string' ? container.ports[port] : undefined;
}

/** Whether `labels` has every pair of `selector`. */
export function selects(selector: YamlMap, labels: YamlMap): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/** A memory quantity (`256Mi`, `2Gi`, `512M`) in MiB. */
export function mebibytes(quantity: unknown, where: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(quantity));
  if (match === null) throw new Error(`${where}: ${String(quantity)} is not a memory quantity`);
  const factors: Record<string, number> = {
    Ki: 1 / 1024,
    Mi: 1,
    Gi: 1024,
    K: 1e3 / 2 ** 20,
    M: 1e6 / 2 ** 20,
    G: 1e9 / 2 ** 20,
  };
  return Number(match[1]) * (match[2] === undefined ? 1 / 2 ** 20 : factors[match[2]]!);
}
