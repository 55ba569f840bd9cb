import { badRequest } from '@sp/core';
import { GRAPH_NAME_PATTERN, graphNameProblem } from '@sp/graphs';

export function isGraphName(name: string): boolean {
  return graphNameProblem(name) === undefined;
}

/** Returns the name when it is usable, or throws a 400 saying why not. */
export function validateName(name: string | undefined): string {
  const problem = graphNameProblem(name);
  if (name === undefined || problem === 'pattern') throw badRequest(`invalid name: must match ${GRAPH_NAME_PATTERN.source}`);
  if (problem === 'reserved') throw badRequest(`invalid name: "${name}" is reserved`);
  return name;
}
