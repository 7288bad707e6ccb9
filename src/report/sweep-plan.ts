import type { Setting } from '../config/settings.js';
import type { Plan } from '../plan/types.js';
import type { ModeRole, OverlapLayout } from '../vocabulary.js';
import { roleLabel } from './labels.js';
import { DEFAULT_COLUMNS, fitLines } from './width.js';

export interface SweepPreview {
  /** Each setting of the non-layout axes (an empty list where there are none) with its plan. */
  readonly settings: ReadonlyArray<{ readonly settings: readonly Setting[]; readonly plan: Plan }>;
  /** Host time for each setting's race of layouts, seconds. */
  readonly budgetS: number;
  readonly exhaustive: boolean;
}

/**
 * `sweep --dry-run`: per setting, the layouts the race would measure (as planned, which may differ from the axes
 * where a chunk count does not divide the input) and the modes measured once beside them; the budget bounds the race,
 * so a long sweep is seen before it starts. Needs no GPU. Every line fits `columns`.
 */
export function renderSweepPlan(preview: SweepPreview, columns = DEFAULT_COLUMNS): string {
  const lines: string[] = [];
  const first = preview.settings[0]?.plan;
  if (!first) return 'no setting to sweep';
  const count = preview.settings.length;
  let layouts = 0;
  for (const [index, { settings, plan }] of preview.settings.entries()) {
    const overlapped = plan.schedules.flatMap((s) =>
      s.role.kind === 'overlapped' && s.device === plan.devices[0] ? [s.role.layout] : [],
    );
    layouts += overlapped.length;
    const named = settings.length ? `: ${settings.map((s) => `${s.path}=${s.value}`).join(', ')}` : '';
    lines.push(
      `${count > 1 ? `Setting ${index + 1} of ${count}${named}` : `Sweep of ${plan.name}`} on device ${plan.devices.join(', ')}: ${overlapped.length} layouts`,
    );
    const issued = (l: OverlapLayout) =>
      `${l.order}${l.issue === 'graph' ? ', replayed as a CUDA graph' : ''}${l.topology === 'chunk-per-stream' ? '' : `, ${l.topology}`}`;
    for (const [how, group] of groupBy(overlapped, issued)) {
      for (const [streams, same] of groupBy(group, (l) => l.streams)) {
        lines.push(
          `  ${streams} stream${streams === 1 ? '' : 's'}, ${how}: ${same.map((l) => l.chunks).join(', ')} chunks`,
        );
      }
    }
    lines.push(`  measured beside them: ${onceModes(plan).join(', ')}`);
  }
  const race = preview.exhaustive
    ? 'every layout until the noise rule or the budget stops it (--exhaustive)'
    : 'clearly slower layouts dropped between rounds';
  lines.push(
    `${layouts} layouts in all, raced for at most ${preview.budgetS} s a setting (--max-time), ${preview.budgetS * count} s for ${count} setting${count === 1 ? '' : 's'}: ${race}; ` +
      'then the best layout is traced. Nothing was measured: drop --dry-run to sweep.',
  );
  return fitLines(lines.join('\n'), columns);
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

// The model's parts that come once per layout, counted rather than listed: 22 layouts made a line of 900 characters.
const COUNTED: Partial<Record<ModeRole['kind'], string>> = {
  'kernels-chunked': 'the kernels chunked as each layout',
  'op-cost': 'small ops back to back',
  'issue-cost': 'event issue costs',
};

/** The modes a setting measures besides its layouts, on the plan's first device. */
function onceModes(plan: Plan): string[] {
  const roles = plan.schedules
    .filter((s) => s.role.kind !== 'overlapped' && s.device === plan.devices[0])
    .map((s) => s.role);
  const counted = groupBy(
    roles.filter((r) => COUNTED[r.kind] !== undefined),
    (r) => COUNTED[r.kind] as string,
  );
  const named = [...new Set(roles.filter((r) => COUNTED[r.kind] === undefined).map((r) => roleLabel(r)))];
  return [...named, ...[...counted].map(([what, same]) => `${what} (${same.length})`)];
}
