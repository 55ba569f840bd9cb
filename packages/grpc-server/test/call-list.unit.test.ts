import { describe, expect, it } from '@jest/globals';
import { CallList, type Listed } from '../src/call-list.js';

class Item implements Listed<Item> {
  prevListed: Item | undefined = undefined;
  nextListed: Item | undefined = undefined;
  constructor(readonly name: string) {}
}

const names = (list: CallList<Item>): string[] => {
  const seen: string[] = [];
  list.forEach((item) => seen.push(item.name));
  return seen.sort();
};

describe('CallList', () => {
  it('should hold what was added and not what was removed, from any place in the list', () => {
    const list = new CallList<Item>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => new Item(name));
    for (const item of [a!, b!, c!, d!]) list.add(item);
    expect(list.size).toBe(4);
    list.remove(c!); // in the middle
    list.remove(d!); // the head (the last added)
    list.remove(a!); // the tail
    expect(names(list)).toEqual(['b']);
    expect(list.size).toBe(1);
    list.remove(b!);
    expect(names(list)).toEqual([]);
    expect(list.size).toBe(0);
  });

  it('should clear the links of a removed item, so it holds no other item', () => {
    const list = new CallList<Item>();
    const [a, b, c] = ['a', 'b', 'c'].map((name) => new Item(name));
    for (const item of [a!, b!, c!]) list.add(item);
    list.remove(b!);
    expect(b!.prevListed).toBeUndefined();
    expect(b!.nextListed).toBeUndefined();
  });

  it('should ignore an item removed twice or never added', () => {
    const list = new CallList<Item>();
    const [a, b, stranger] = ['a', 'b', 'stranger'].map((name) => new Item(name));
    list.add(a!);
    list.add(b!);
    list.remove(a!);
    list.remove(a!);
    list.remove(stranger!);
    expect(names(list)).toEqual(['b']);
    expect(list.size).toBe(1);
  });

  it('should visit every item once while the visitor removes the item it is given', () => {
    const list = new CallList<Item>();
    const items = Array.from({ length: 10 }, (_, i) => new Item(String(i)));
    for (const item of items) list.add(item);
    const visited: string[] = [];
    list.forEach((item) => {
      visited.push(item.name);
      if (Number(item.name) % 2 === 0) list.remove(item);
    });
    expect(visited.sort()).toEqual(items.map((item) => item.name).sort());
    expect(names(list)).toEqual(['1', '3', '5', '7', '9']);
  });
});
