import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { anchorsOf, linksOf } from './markdown.js';

const SKIPPED_DIRS = ['node_modules', 'dist', '.cache', '.git', 'coverage'];

/** Every Markdown file of the repository, relative to `root`. */
export function markdownFiles(root: string, dir = ''): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED_DIRS.includes(entry.name) ? [] : markdownFiles(root, path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** Whether `anchor` names a heading of the Markdown file at `path` (line anchors of other files always do). */
function hasAnchor(root: string, path: string, anchor: string): boolean {
  if (!path.endsWith('.md') || statSync(join(root, path)).isDirectory() || /^L\d+(-L\d+)?$/.test(anchor)) return true;
  return anchorsOf(readFileSync(join(root, path), 'utf8')).has(anchor.toLowerCase());
}

/**
 * Why a link from `file` to `target` does not resolve in the repository, or undefined when it does:
 * the file or folder must exist, and an anchor must name a heading of the Markdown file it points into.
 * Links to other sites are not followed.
 */
export function brokenLink(root: string, file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [path = '', anchor = ''] = target.split('#', 2) as [string, string | undefined];
  const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
  if (resolved.startsWith('..') || !existsSync(join(root, resolved))) return `${file}: link to ${target}: no such file`;
  return anchor === '' || hasAnchor(root, resolved, anchor) ? undefined : `${file}: link to ${target}: no heading #${anchor} in ${resolved}`;
}

/** Every link of every Markdown file that does not resolve. */
export function brokenLinks(root: string): string[] {
  return markdownFiles(root).flatMap((file) =>
    linksOf(readFileSync(join(root, file), 'utf8'))
      .map((target) => brokenLink(root, file, target))
      .filter((problem): problem is string => problem !== undefined),
  );
}
