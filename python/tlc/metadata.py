"""The `// tlc.meta` block of tlc's PTX (format: include/tlc/metadata.h) as
Python values."""

PREFIX = "// tlc.meta "


def _dims(text):
    inner = text.strip()[1:-1]
    return [int(d) if d.lstrip("-").isdigit() else d for d in inner.split(",")] if inner else []


def parse(ptx):
    """{"version", "tlc", "arch", "kernels": {name: {"params", "syms", "grid", "threads", "smem", ...}},
    "functions": {name: {"params", "syms", "workspaces", "launches", ...}}}.
    A kernel's launch checks (asserts the runtime checks) are "checks": ["LINE:COL EXPR", ...].
    A param is {"name", "kind": "tensor" | "scalar", "dtype", and for tensors "shape" and "strided"}.
    A function (a source function with several `with Kernel` blocks) has its parameters and checks as
    a kernel has, "workspaces" [{"name", "dtype", "shape"}] and "launches" [kernel names in order].
    A kernel's "tmaps" are the tensors its TMA descriptors are built from, in order, and "tmap_lines"
    each one's words ({"tensor", "box", "swizzle", ...}, with "view" / "im2col" the expressions of the
    lines that complete it)."""
    module = {"kernels": {}, "functions": {}}
    kernel = None
    for line in ptx.splitlines():
        if not line.startswith(PREFIX):
            continue
        words = line[len(PREFIX):].split()
        if not words:
            continue
        head, rest = words[0], words[1:]
        if head.startswith("v") and head[1:].isdigit():
            module["version"] = int(head[1:])
            for w in rest:
                k, _, v = w.partition("=")
                module[k] = v
        elif head == "kernel":
            kernel = {"name": rest[0], "params": [], "syms": [], "tmaps": [], "smem": 0}
            module["kernels"][rest[0]] = kernel
        elif head == "function":
            kernel = {"name": rest[0], "params": [], "syms": [], "workspaces": [], "launches": []}
            module["functions"][rest[0]] = kernel
        elif kernel is None or head == "end":
            continue
        elif head == "sym":
            kernel["syms"].append(rest[0])
        elif head == "tensor":
            shape_end = next(i for i, w in enumerate(rest) if w.endswith("]"))
            kernel["params"].append({"name": rest[0], "kind": "tensor", "dtype": rest[1],
                                     "shape": _dims(" ".join(rest[2:shape_end + 1])),
                                     "strided": "strided" in rest[shape_end + 1:]})
        elif head == "workspace":
            kernel["workspaces"].append({"name": rest[0], "dtype": rest[1], "shape": _dims(" ".join(rest[2:]))})
        elif head == "launch":
            kernel["launches"].append(rest[0])
        elif head == "scalar":
            kernel["params"].append({"name": rest[0], "kind": "scalar", "dtype": rest[1]})
        elif head == "tmap":
            kernel["tmaps"].append(rest[0])
            words = dict(w.partition("=")[::2] for w in rest[1:])
            kernel.setdefault("tmap_lines", []).append({"tensor": rest[0], **words})
        elif head in ("view", "im2col") and kernel.get("tmap_lines"):
            kernel["tmap_lines"][-1][head] = " ".join(rest)
        elif head == "threads":
            kernel["threads"] = tuple(int(w) for w in rest)
        elif head == "smem":
            kernel["smem"] = int(rest[0])
        elif head == "grid":
            kernel["grid"] = " ".join(rest)
        elif head == "check":
            kernel.setdefault("checks", []).append(" ".join(rest))
        else:
            kernel[head] = " ".join(rest)
    return module
