"""A small YAML reader for the normalised output of `kubectl kustomize` and for the rule files,
used when PyYAML is not installed (the tests add no pip dependencies).

Supports block mappings and sequences (a sequence may sit at its parent key's indent), plain,
single- and double-quoted scalars, block scalars (| |- > >-), empty and simple flow
collections, comments and `---` document separators. Scalars stay strings except int, float,
true/false and null, as YAML 1.2's core schema reads them. Anything else raises ValueError.
"""
import json
import re


def _scalar(text):
    t = text.strip()
    if t == "" or t in ("~", "null"):
        return None
    if t[0] == '"':
        return json.loads(t)
    if t[0] == "'":
        return t[1:-1].replace("''", "'")
    if t in ("true", "false"):
        return t == "true"
    if re.fullmatch(r"[-+]?[0-9]+", t):
        return int(t)
    if re.fullmatch(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", t):
        return float(t)
    if t[0] == "[" and t[-1] == "]":
        inner = t[1:-1].strip()
        return [_scalar(x) for x in inner.split(",")] if inner else []
    if t == "{}":
        return {}
    if t[0] in "{&*!|>@`%":
        raise ValueError(f"unsupported YAML: {t}")
    return t


def _strip_comment(s):
    """Drop a trailing comment outside quotes."""
    q = None
    for i, c in enumerate(s):
        if q:
            if c == q:
                q = None
        elif c in "\"'":
            q = c
        elif c == "#" and (i == 0 or s[i - 1] in " \t"):
            return s[:i].rstrip()
    return s.rstrip()


class _Reader:
    def __init__(self, lines):
        self.lines = lines
        self.i = 0

    def _skip(self):
        while self.i < len(self.lines):
            s = self.lines[self.i].strip()
            if s == "" or s.startswith("#"):
                self.i += 1
            else:
                return True
        return False

    def _indent(self):
        line = self.lines[self.i]
        return len(line) - len(line.lstrip(" "))

    def block_scalar(self, style, parent_indent):
        body = []
        ind = None
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip() == "":
                body.append("")
                self.i += 1
                continue
            n = len(line) - len(line.lstrip(" "))
            if ind is None:
                ind = n
            if n < ind or n <= parent_indent:
                break
            body.append(line[ind:])
            self.i += 1
        while body and body[-1] == "":
            body.pop()
        if style[0] == ">":
            out, prev_more = "", False
            for k, ln in enumerate(body):
                more = ln.startswith(" ") or ln == ""
                if k == 0:
                    out = ln
                elif ln == "" or more or prev_more:
                    out += "\n" + ln
                else:
                    out += " " + ln
                prev_more = more and ln != ""
            text = out
        else:
            text = "\n".join(body)
        return text if style.endswith("-") else text + "\n"

    def value_after(self, rest, indent):
        rest = _strip_comment(rest)
        if rest in ("|", "|-", ">", ">-"):
            self.i += 1
            return self.block_scalar(rest, indent)
        if rest != "":
            # A scalar can have no children: more-indented lines continue it (folded).
            self.i += 1
            parts = [rest]
            while self.i < len(self.lines):
                line = self.lines[self.i]
                n = len(line) - len(line.lstrip(" "))
                if line.strip() and n <= indent:
                    break
                parts.append(line.strip())
                self.i += 1
            while parts and parts[-1] == "":
                parts.pop()
            text = parts[0]
            for prev, part in zip(parts, parts[1:]):
                if part == "":
                    text += "\n"
                else:
                    text += ("" if prev == "" else " ") + part
            return _scalar(text)
        self.i += 1
        if not self._skip():
            return None
        n = self._indent()
        s = self.lines[self.i].lstrip(" ")
        if n > indent or (n == indent and s.startswith("- ")):
            return self.node(n)
        return None

    def node(self, indent):
        if not self._skip():
            return None
        s = self.lines[self.i].lstrip(" ")
        if s.startswith("- ") or s == "-":
            return self.seq(indent)
        return self.mapping(indent)

    def seq(self, indent):
        out = []
        while self._skip() and self._indent() == indent:
            s = self.lines[self.i][indent:]
            if not (s.startswith("- ") or s == "-"):
                break
            rest = s[2:] if s.startswith("- ") else ""
            if re.match(r"[^'\"\s][^:]*:(\s|$)|['\"][^'\"]*['\"]:(\s|$)", rest):
                # "- key: value": a mapping whose first key sits after the dash.
                self.lines[self.i] = " " * (indent + 2) + rest
                out.append(self.mapping(indent + 2))
            else:
                out.append(self.value_after(rest, indent))
        return out

    def mapping(self, indent):
        out = {}
        while self._skip() and self._indent() == indent:
            s = self.lines[self.i][indent:]
            if s.startswith("- "):
                break
            m = re.match(r"(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^:#]+?):(\s+|$)(.*)", s)
            if not m:
                raise ValueError(f"line {self.i + 1}: cannot parse '{s}'")
            key = _scalar(m.group(1))
            if key in out:
                raise ValueError(f"line {self.i + 1}: duplicate key '{key}'")
            out[key] = self.value_after(m.group(3), indent)
        if self._skip() and self._indent() > indent:
            raise ValueError(f"line {self.i + 1}: bad indentation")
        return out


def load_all(text):
    docs, cur = [], []
    for line in text.splitlines():
        if line.rstrip() == "---":
            docs.append(cur)
            cur = []
        else:
            cur.append(line)
    docs.append(cur)
    out = []
    for d in docs:
        r = _Reader(d)
        if r._skip():
            out.append(r.node(0))
    return out


def load(text):
    docs = load_all(text)
    if len(docs) != 1:
        raise ValueError(f"expected one document, found {len(docs)}")
    return docs[0]
