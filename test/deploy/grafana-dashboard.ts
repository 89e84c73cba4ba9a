import { readRepoJson } from './repo-files.js';
import { listAt, mapAt, stringAt, type YamlMap } from './yaml-shape.js';

/** A data source reference in a dashboard: `{ "type": "prometheus", "uid": "prometheus" }`. */
export interface DatasourceRef {
  type: string | undefined;
  uid: string;
}

/** One query of a panel. */
export interface DashboardTarget {
  refId: string;
  /** The PromQL expression (`expr`). */
  expr: string;
  /** The target's own data source, or the panel's when it names none. */
  datasource: DatasourceRef | undefined;
}

/** A panel that draws data (rows are flattened away). */
export interface DashboardPanel {
  id: number;
  title: string;
  type: string;
  datasource: DatasourceRef | undefined;
  targets: DashboardTarget[];
}

/** A Grafana dashboard JSON file, shaped for checks. */
export interface GrafanaDashboard {
  file: string;
  uid: string;
  title: string;
  /** Every panel but rows, including those nested in collapsed rows, in file order. */
  panels: DashboardPanel[];
  /** Every `templating.list` variable's name. */
  variables: string[];
}

/** Reads a dashboard file from the repository; throws naming the panel and key when malformed. */
export function loadDashboard(file: string): GrafanaDashboard {
  const root = mapAt(readRepoJson(file), file);
  const panels: DashboardPanel[] = [];
  const visit = (entries: unknown, where: string): void => {
    for (const [index, entry] of listAt(entries, where).entries()) {
      const panel = mapAt(entry, `${where}[${index}]`);
      const panelWhere = `${file}: panel ${String(panel.id)} (${String(panel.title)})`;
      if (panel.type === 'row') {
        if (panel.panels !== undefined) visit(panel.panels, `${panelWhere}.panels`);
        continue;
      }
      const datasource = datasourceOf(panel.datasource, `${panelWhere}.datasource`);
      panels.push({
        id: Number(panel.id),
        title: stringAt(panel.title, `${panelWhere}.title`),
        type: stringAt(panel.type, `${panelWhere}.type`),
        datasource,
        targets: (panel.targets === undefined ? [] : listAt(panel.targets, `${panelWhere}.targets`))
          .map((target, targetIndex) => mapAt(target, `${panelWhere}.targets[${targetIndex}]`))
          .map((target) => ({
            refId: stringAt(target.refId, `${panelWhere}.targets.refId`),
            expr: stringAt(target.expr, `${panelWhere}.targets[${String(target.refId)}].expr`),
            datasource:
              datasourceOf(target.datasource, `${panelWhere}.targets.datasource`) ?? datasource,
          })),
      });
    }
  };
  visit(root.panels, `${file}: panels`);
  const templating = root.templating === undefined ? {} : mapAt(root.templating, 'templating');
  return {
    file,
    uid: stringAt(root.uid, `${file}: uid`),
    title: stringAt(root.title, `${file}: title`),
    panels,
    variables: (templating.list === undefined ? [] : listAt(templating.list, 'templating.list'))
      .map((variable) => mapAt(variable, 'templating.list[]'))
      .map((variable) => stringAt(variable.name, 'templating.list[].name')),
  };
}

function datasourceOf(value: unknown, where: string): DatasourceRef | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    throw new TypeError(`${where}: a data source by name (${value}); refer to it by uid`);
  }
  const reference: YamlMap = mapAt(value, where);
  return {
    type: reference.type === undefined ? undefined : stringAt(reference.type, `${where}.type`),
    uid: stringAt(reference.uid, `${where}.uid`),
  };
}
