"""No import circles: the graph of module-level imports between tapeflow's modules, built from the sources,
has no cycle. Imports inside functions are lazy (they run after every module is loaded) and are left out.

The op modules that once formed a circle (array_ops, math_ops, reduction_ops) now import in one direction,
core_ops <- math_ops <- array_ops <- reduction_ops, and a test keeps that order.
"""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Source directory -> the package it installs as (pyproject's package-dir).
PACKAGE_DIRS = {"tapeflow": "tapeflow", "layers": "tapeflow.layers", "optimizers": "tapeflow.optimizers",
                "saving": "tapeflow.saving", "keras_ops": "tapeflow.keras_ops"}


def source_modules():
    """{module name: (path, is_package)} for every .py file of the package directories."""
    modules = {}
    for directory, package in PACKAGE_DIRS.items():
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, directory)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = os.path.relpath(dirpath, os.path.join(ROOT, directory))
            prefix = package if rel == "." else package + "." + rel.replace(os.sep, ".")
            for filename in filenames:
                if filename.endswith(".py"):
                    is_package = filename == "__init__.py"
                    name = prefix if is_package else prefix + "." + filename[:-3]
                    modules[name] = (os.path.join(dirpath, filename), is_package)
    return modules


def module_level_imports(tree):
    """Import statements not inside a function (those run when the module is imported)."""
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child)
    visit(tree)
    return found


def import_graph(modules):
    graph = {}
    for name, (path, is_package) in modules.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        package = name if is_package else name.rpartition(".")[0]
        targets = set()
        for node in module_level_imports(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        targets.add(alias.name)
                continue
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = base + ("." + node.module if node.module else "")
            else:
                source = node.module
            for alias in node.names:
                submodule = source + "." + alias.name
                if submodule in modules:        # ``from package import module``: needs that module
                    targets.add(submodule)
                elif source in modules:         # ``from module import name``: needs the module
                    targets.add(source)
        targets.discard(name)
        graph[name] = sorted(targets)
    return graph


def find_cycle(graph):
    """One cycle as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in graph.get(node, ()):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def circles(graph):
    """The strongly connected components of more than one module (Tarjan), as sets."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_covers_the_moved_packages():
    graph = import_graph(source_modules())
    assert "tapeflow.layers.models.model" in graph and "tapeflow.saving" in graph
    assert "tapeflow.layers.layer" in graph["tapeflow.layers.core.dense"]


def test_find_cycle_reports_a_cycle():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b"], "b": [], "c": ["a", "b"]}) is None


def test_circles_finds_each_component():
    graph = {"a": ["b"], "b": ["a", "c"], "c": ["d"], "d": ["c"], "e": ["a"]}
    assert sorted(map(sorted, circles(graph))) == [["a", "b"], ["c", "d"]]


def test_no_import_cycle():
    graph = import_graph(source_modules())
    for component in circles(graph):
        cycle = find_cycle({m: [t for t in graph[m] if t in component] for m in component})
        raise AssertionError("import cycle: " + " -> ".join(cycle))


def test_the_core_op_modules_import_in_one_direction():
    graph = import_graph(source_modules())
    order = ["tapeflow.ops.core_ops", "tapeflow.ops.math_ops", "tapeflow.ops.array_ops", "tapeflow.ops.reduction_ops"]
    for i, module in enumerate(order):
        assert not set(graph[module]) & set(order[i:]), f"{module} imports a module at or above its level"
    assert set(order[:3]) <= set(graph["tapeflow.ops.reduction_ops"])
