# SPDX-License-Identifier: MIT
# The layout checker: the include graph of the kernel's sources, by module and by folder.
"""Check the kernel's layout from its `#include "..."` and `%include "..."` lines.

A module is a source's path without its extension (arch/x86/apic.c and apic.h are one module);
its folder is the path's directory. The check fails when
  - a cycle of modules, or of folders, crosses folders (a strongly connected component of the
    module graph or of the folder graph that spans two folders or more), or
  - a folder includes one it may not (ALLOWED below): lib/ only itself, arch/x86 only lib/,
    platform/pc those two, kernel/ those three, and the subsystems (emulator, dr, ds, lbr, pmu, sched)
    those four but never each other.
With --objects DIR it also reads the kernel's objects (nm) and checks the link graph the same way:
an undefined symbol of one object is an edge to the object that defines it.
--stats prints files and lines per folder and every cycle, crossing or not, for the record.
With --inside FOLDER... it also fails on a cycle between the files of each FOLDER, by links and
by includes, where a module is a .c and the .h of its stem, and the folder's interface header
(FOLDER/FOLDER.h, which declares what several files implement) is no edge: each folder's state
lives in one file and the rest stand above it (README.md, Layout).
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The kernel's folders, bottom first; tests/ and witness/ are not the kernel.
FOLDERS = ('lib', 'arch/x86', 'platform/pc', 'kernel', 'emulator', 'dr', 'ds', 'lbr', 'pmu', 'sched',
           'debugstate', 'runner', 'boot')

# What each layer may include besides itself (the README's Layout section). The subsystems stand
# side by side over kernel/ and never include each other; runner/ and boot/ may include anything
# that makes no cycle.
BELOW_SUBSYSTEMS = ('lib', 'arch/x86', 'platform/pc', 'kernel')
ALLOWED = {
    'lib': (),
    'arch/x86': ('lib',),
    'platform/pc': ('lib', 'arch/x86'),
    'kernel': ('lib', 'arch/x86', 'platform/pc'),
    'emulator': BELOW_SUBSYSTEMS,
    'dr': BELOW_SUBSYSTEMS,
    'ds': BELOW_SUBSYSTEMS,
    'lbr': BELOW_SUBSYSTEMS,
    'pmu': BELOW_SUBSYSTEMS,
    'sched': BELOW_SUBSYSTEMS,
}

SOURCE_EXTS = ('.c', '.h', '.asm', '.inc')
INCLUDE = re.compile(r'^\s*[#%]\s*include\s+"([^"]+)"')


def folder_of(path):
    return os.path.dirname(path)


def module_of(path):
    return os.path.splitext(path)[0]


def sources(root):
    """The kernel's source files, as paths relative to root."""
    for folder in FOLDERS:
        directory = os.path.join(root, folder)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            if name.endswith(SOURCE_EXTS):
                yield os.path.join(folder, name)


def includes(root, path):
    """The quoted includes of one file that name a kernel source (not build/generated ones)."""
    found = []
    with open(os.path.join(root, path), encoding='utf-8') as source:
        for line in source:
            match = INCLUDE.match(line)
            if match and os.path.isfile(os.path.join(root, match.group(1))):
                found.append(match.group(1))
    return found


def include_edges(root):
    """(file, included file) pairs over the kernel's sources."""
    edges = []
    for path in sources(root):
        for target in includes(root, path):
            edges.append((path, target))
    return edges


def link_edges(root, objects):
    """(object, object) pairs: the first uses a symbol the second defines (nm, global only).
    Objects whose source is gone (a file moved since the last build) are not the kernel's."""
    defined = {}
    undefined = {}
    for folder in FOLDERS:
        directory = os.path.join(objects, folder)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            if not name.endswith('.o'):
                continue
            rel = os.path.join(folder, name)
            stem = os.path.join(root, rel[:-2])
            if not any(os.path.isfile(stem + ext) for ext in ('.c', '.asm')):
                continue
            out = subprocess.run(['nm', os.path.join(objects, rel)], check=True,
                                 capture_output=True, text=True).stdout
            undefined[rel] = set()
            for line in out.splitlines():
                fields = line.split()
                if len(fields) == 2 and fields[0] == 'U':
                    undefined[rel].add(fields[1])
                elif len(fields) == 3 and fields[1] in 'TDBR':
                    defined[fields[2]] = rel
    edges = []
    for rel, symbols in undefined.items():
        for symbol in sorted(symbols):
            if symbol in defined and defined[symbol] != rel:
                edges.append((rel, defined[symbol]))
    return edges


def strongly_connected(nodes, edges):
    """Tarjan's algorithm, iterative: the components with more than one node."""
    graph = {node: set() for node in nodes}
    for a, b in edges:
        if a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def cycles(edges, unit):
    """The module (or object) components and the folder components of one edge list."""
    modules = [(unit(a), unit(b)) for a, b in edges]
    folders = [(folder_of(a), folder_of(b)) for a, b in modules]
    module_nodes = {m for edge in modules for m in edge}
    folder_nodes = {f for edge in folders for f in edge}
    return strongly_connected(module_nodes, modules), strongly_connected(folder_nodes, folders)


def layer_violations(edges):
    """Includes from a lower layer into a folder it may not include."""
    bad = []
    for a, b in edges:
        source, target = folder_of(a), folder_of(b)
        if source in ALLOWED and target != source and target not in ALLOWED[source]:
            bad.append((a, b))
    return sorted(set(bad))


def crossing(components):
    return [c for c in components if len({folder_of(m) for m in c}) > 1]


def stats(root):
    """Files and lines per folder."""
    rows = []
    for folder in FOLDERS:
        directory = os.path.join(root, folder)
        if not os.path.isdir(directory):
            continue
        files = [n for n in os.listdir(directory) if n.endswith(SOURCE_EXTS)]
        lines = 0
        for name in files:
            with open(os.path.join(directory, name), encoding='utf-8') as source:
                lines += sum(1 for _ in source)
        rows.append((folder, len(files), lines))
    return rows


def report(name, edges, unit, verbose):
    """Print the components of one graph; the number of failures."""
    modules, folders = cycles(edges, unit)
    failures = 0
    for component in crossing(modules):
        print(f'check_layout: {name} cycle crosses folders: {" -> ".join(component)}')
        failures += 1
    for component in folders:
        print(f'check_layout: {name} folder cycle: {" <-> ".join(component)}')
        failures += 1
    if verbose:
        for component in modules:
            print(f'  {name} cycle of {len(component)}: {" ".join(component)}')
    return failures, modules, folders


def inside(edges, folder, interface=None):
    """The cycles between the modules of one folder; an edge into interface is none."""
    inner = [(module_of(a), module_of(b)) for a, b in edges
             if folder_of(a) == folder and folder_of(b) == folder and b != interface]
    nodes = {m for edge in inner for m in edge}
    return strongly_connected(nodes, inner)


def report_inside(folders, edges, links):
    """Print each folder's inner cycles; the number of failures."""
    failures = 0
    for folder in folders:
        graphs = [('include', edges, f'{folder}/{os.path.basename(folder)}.h')]
        if links is not None:
            graphs.insert(0, ('link', links, None))
        for name, graph, interface in graphs:
            found = inside(graph, folder, interface)
            failures += len(found)
            print(f'check_layout: {folder}/: {name} cycles: ' +
                  ('none' if not found else '; '.join(' <-> '.join(c) for c in found)))
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(prog="scripts/check_layout", description=__doc__.splitlines()[0])
    parser.add_argument('--root', default=ROOT, help='the source tree (default: this one)')
    parser.add_argument('--objects', help='the build directory: also check the link graph')
    parser.add_argument('--stats', action='store_true',
                        help='print files and lines per folder and every cycle')
    parser.add_argument('--inside', nargs='+', default=[], metavar='FOLDER',
                        help='also fail on a cycle between the files of each FOLDER')
    args = parser.parse_args(argv)
    for folder in args.inside:
        if folder.rstrip('/') not in FOLDERS:
            parser.error(f'--inside: {folder} is not one of the kernel folders {", ".join(FOLDERS)}')
    args.inside = [folder.rstrip('/') for folder in args.inside]

    edges = include_edges(args.root)
    failures = 0
    for a, b in layer_violations(edges):
        print(f'check_layout: {a} includes {b}: {folder_of(a)} may include only '
              f'{", ".join((folder_of(a),) + ALLOWED[folder_of(a)])}')
        failures += 1
    count, modules, folders = report('include', edges, module_of, args.stats)
    failures += count
    summary = [f'{len(modules)} include cycles ({len(crossing(modules))} crossing folders)']
    links = None
    if args.objects:
        links = link_edges(args.root, args.objects)
        count, modules, folders = report('link', links, lambda p: p, args.stats)
        failures += count
        summary.append(f'{len(modules)} link cycles ({len(crossing(modules))} crossing folders)')
    failures += report_inside(args.inside, edges, links)
    if args.stats:
        for folder, files, lines in stats(args.root):
            print(f'  {folder:12} {files:4} files {lines:6} lines')
    print(f'check_layout: {", ".join(summary)}; {failures} failures')
    return 1 if failures else 0
