# SPDX-License-Identifier: BSD-2-Clause
"""The configuration file of a fabric: parsing, checking, and the link
settings (docs/fabric.md has the format). Every error is one line naming
the file, the line and the field: ConfigError(str)."""

import fnmatch
import re

MAX_PLANES = 8
MAX_HOSTS = 250
MAX_LEAVES = 32
MAX_SPINES = 16

# The settings of one link direction, with their defaults. Rates in bit/s,
# sizes in bytes, probabilities as floats in [0, 1].
LINK_DEFAULTS = {
    "rate": 0,          # 0: unlimited (no queue, no phantom queue)
    "queue": 256 * 1024,
    "ecn": 64 * 1024,   # 0: never mark
    "loss": 0.0,
    "corrupt": 0.0,
    "dup": 0.0,
    "reorder": 0.0,
    "lane": 0.001,      # seconds a reordered full-size packet lags
    "delay": 0.0,       # seconds the delay line holds every IP packet
    "state": "up",
}
# Only for `set` (times, relative to the command, in seconds).
TIMED_KEYS = ("down_at", "up_at")


class ConfigError(Exception):
    pass


def parse_rate(v):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?)(bit|bps|b)?", v.lower())
    if not m:
        raise ValueError("expected a rate such as 1gbit, 500mbit or 0")
    mult = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
    r = int(float(m.group(1)) * mult)
    if r != 0 and not 1_000_000 <= r <= 400_000_000_000:
        raise ValueError("rate must be 0 (unlimited) or 1mbit..400gbit")
    return r


def parse_size(v):
    m = re.fullmatch(r"(\d+)([kmg]?)b?", v.lower())
    if not m:
        raise ValueError("expected a size in bytes such as 256k or 1m")
    s = int(m.group(1)) * {"": 1, "k": 1024, "m": 1 << 20,
                           "g": 1 << 30}[m.group(2)]
    if s > 1 << 30:
        raise ValueError("at most 1g")
    return s


def parse_prob(v):
    try:
        p = float(v[:-1]) / 100 if v.endswith("%") else float(v)
    except ValueError:
        raise ValueError("expected a probability such as 0.01 or 1%")
    if not 0.0 <= p <= 1.0:
        raise ValueError("a probability is between 0 and 1 (0% and 100%)")
    return p


def parse_secs(v):
    m = re.fullmatch(r"\+?(\d+(?:\.\d+)?)(ms|s)?", v)
    if not m:
        raise ValueError("expected seconds from now, such as 2, 1.5s or 500ms")
    s = float(m.group(1))
    return s / 1000 if m.group(2) == "ms" else s


def parse_state(v):
    if v not in ("up", "down"):
        raise ValueError("expected up or down")
    return v


def parse_lane(v):
    s = parse_secs(v)
    if not 0.0001 <= s <= 1.0:
        raise ValueError("the reorder lag is 100us..1s")
    return s


def parse_delay(v):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s)?", v)
    if not m:
        raise ValueError("expected a time such as 100us, 2ms, 0.05s or 0")
    s = float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0,
                             None: 1.0}[m.group(2)]
    if s != 0 and not 10e-6 <= s <= 1.0:
        raise ValueError("the delay is 0 (none) or 10us..1s")
    return s


PARSERS = {
    "rate": parse_rate, "queue": parse_size, "ecn": parse_size,
    "loss": parse_prob, "corrupt": parse_prob, "dup": parse_prob,
    "reorder": parse_prob, "lane": parse_lane, "delay": parse_delay,
    "state": parse_state,
    "down_at": parse_secs, "up_at": parse_secs,
}


def parse_settings(words, allow_timed, where):
    """key=value words -> dict; `down` and `up` alone mean state=."""
    out = {}
    for w in words:
        if w in ("down", "up"):
            out["state"] = w
            continue
        k, eq, v = w.partition("=")
        if not eq or k not in PARSERS or (k in TIMED_KEYS and not allow_timed):
            keys = sorted(k for k in PARSERS
                          if allow_timed or k not in TIMED_KEYS)
            raise ConfigError("%s: unknown setting '%s' (known: %s)"
                              % (where, w, ", ".join(keys)))
        try:
            out[k] = PARSERS[k](v)
        except ValueError as e:
            raise ConfigError("%s: %s=%s: %s" % (where, k, v, e))
    if "queue" in out and out["queue"] < 4096:
        raise ConfigError("%s: queue=%d: at least 4k (one frame)"
                          % (where, out["queue"]))
    return out


NAME_RE = re.compile(r"[a-z][a-z0-9]{0,7}")


class Fabric:
    """A checked configuration: name, planes, leaves, spines, hosts (name
    -> leaf), mtu, and the link setting rules in file order."""

    def __init__(self):
        self.name = None
        self.planes = None
        self.leaves = 1
        self.spines = 1
        self.mtu = 9000
        self.ipv6 = False     # IPv6 on every plane too (dual stack)
        self.hosts = []       # [(name, leaf)]
        self.rules = []       # [(pattern, settings)]

    def to_dict(self):
        return {"name": self.name, "planes": self.planes,
                "leaves": self.leaves, "spines": self.spines,
                "mtu": self.mtu, "ipv6": self.ipv6, "hosts": self.hosts,
                "rules": self.rules}

    @classmethod
    def from_dict(cls, d):
        f = cls()
        f.name, f.planes, f.leaves = d["name"], d["planes"], d["leaves"]
        f.spines, f.mtu = d["spines"], d["mtu"]
        f.ipv6 = d.get("ipv6", False)
        f.hosts = [tuple(h) for h in d["hosts"]]
        f.rules = [tuple(r) for r in d["rules"]]
        return f


def _int(where, field, v, lo, hi):
    if not re.fullmatch(r"\d+", v) or not lo <= int(v) <= hi:
        raise ConfigError("%s: %s '%s': expected a number %d..%d"
                          % (where, field, v, lo, hi))
    return int(v)


def parse(path, text=None):
    if text is None:
        try:
            with open(path) as fh:
                text = fh.read()
        except OSError as e:
            raise ConfigError("%s: %s" % (path, e.strerror))
    f = Fabric()
    seen = {}
    for no, raw in enumerate(text.splitlines(), 1):
        where = "%s:%d" % (path, no)
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        kw, args = words[0], words[1:]
        if kw in ("name", "planes", "leaves", "spines", "mtu", "ipv6"):
            if len(args) != 1:
                raise ConfigError("%s: %s takes one value" % (where, kw))
            if kw in seen:
                raise ConfigError("%s: %s given again (first at line %d)"
                                  % (where, kw, seen[kw]))
            seen[kw] = no
            v = args[0]
            if kw == "name":
                if not NAME_RE.fullmatch(v):
                    raise ConfigError(
                        "%s: name '%s': 1-8 characters [a-z0-9], a letter "
                        "first" % (where, v))
                f.name = v
            elif kw == "planes":
                f.planes = _int(where, kw, v, 1, MAX_PLANES)
            elif kw == "leaves":
                f.leaves = _int(where, kw, v, 1, MAX_LEAVES)
            elif kw == "spines":
                f.spines = _int(where, kw, v, 1, MAX_SPINES)
            elif kw == "ipv6":
                if v not in ("yes", "no"):
                    raise ConfigError("%s: ipv6 '%s': expected yes or no"
                                      % (where, v))
                f.ipv6 = v == "yes"
            else:
                f.mtu = _int(where, kw, v, 1280, 9000)
        elif kw == "host":
            if not args or not NAME_RE.fullmatch(args[0]) or \
                    args[0] in ("mgmt",) or re.fullmatch(r"[ls]\d+", args[0]):
                raise ConfigError(
                    "%s: host name '%s': 1-8 characters [a-z0-9], a letter "
                    "first, not mgmt, l<N> or s<N>"
                    % (where, args[0] if args else ""))
            if any(h[0] == args[0] for h in f.hosts):
                raise ConfigError("%s: host '%s' given twice"
                                  % (where, args[0]))
            leaf = 1
            for a in args[1:]:
                k, eq, v = a.partition("=")
                if k != "leaf" or not eq:
                    raise ConfigError("%s: host %s: unknown field '%s' "
                                      "(known: leaf=N)" % (where, args[0], a))
                leaf = _int(where, "leaf", v, 1, MAX_LEAVES)
            f.hosts.append((args[0], leaf, no))
        elif kw == "link":
            if not args:
                raise ConfigError("%s: link needs a name or pattern "
                                  "(e.g. '*' or p1/h1-l1)" % where)
            f.rules.append((args[0], parse_settings(args[1:], False, where),
                            no))
        else:
            raise ConfigError(
                "%s: unknown keyword '%s' (known: name, planes, leaves, "
                "spines, mtu, ipv6, host, link)" % (where, kw))
    if f.name is None:
        raise ConfigError("%s: no 'name' line (the namespaces' prefix)" % path)
    if f.planes is None:
        raise ConfigError("%s: no 'planes' line (1..8)" % path)
    if len(f.hosts) < 2 or len(f.hosts) > MAX_HOSTS:
        raise ConfigError("%s: %d hosts: a fabric has 2..%d 'host' lines"
                          % (path, len(f.hosts), MAX_HOSTS))
    for h, leaf, no in f.hosts:
        if leaf > f.leaves:
            raise ConfigError("%s:%d: host %s: leaf=%d but the fabric has "
                              "%d leaves" % (path, no, h, leaf, f.leaves))
    f.hosts = [(h, leaf) for h, leaf, _ in f.hosts]
    names = set(link_names(f))
    for pat, _, no in f.rules:
        if not any(fnmatch.fnmatchcase(n, pat) for n in names):
            raise ConfigError("%s:%d: link '%s' names no link of this fabric "
                              "(names look like p1/h1-l1, p1/l1-s2; "
                              "'metaroce-fabric show' lists them)"
                              % (path, no, pat))
    f.rules = [(p, s) for p, s, _ in f.rules]
    return f


def cables(f):
    """Every cable as (name, plane, a, b), a the lower tier: host-leaf and
    leaf-spine. Names: p<plane>/<a>-<b>."""
    out = []
    for p in range(1, f.planes + 1):
        for h, leaf in f.hosts:
            out.append(("p%d/%s-l%d" % (p, h, leaf), p, h, "l%d" % leaf))
        if f.leaves > 1:
            for l in range(1, f.leaves + 1):
                for s in range(1, f.spines + 1):
                    out.append(("p%d/l%d-s%d" % (p, l, s), p, "l%d" % l,
                                "s%d" % s))
    return out


def link_names(f):
    """Cable names and direction names (p1/h1>l1, p1/l1>h1)."""
    out = []
    for name, p, a, b in cables(f):
        out += [name, "p%d/%s>%s" % (p, a, b), "p%d/%s>%s" % (p, b, a)]
    return out


def matches(pat, cable, direction):
    """Does pattern pat select this direction (by its name or its
    cable's)?"""
    return fnmatch.fnmatchcase(direction, pat) or \
        fnmatch.fnmatchcase(cable, pat)


def settings_of(f, cable, direction):
    s = dict(LINK_DEFAULTS)
    for pat, rule in f.rules:
        if matches(pat, cable, direction):
            s.update(rule)
    return s
