#!/usr/bin/env python3
"""Doc test of the user guides: extracts the runnable commands of a guide and runs them.

Used by tests/docs/run.sh (ctest docs_user_guides); see the convention below and docs/architecture.md.

Convention (in docs/user-guide.md and docs/user-guide.zh-CN.md):
  * Only fenced code blocks directly preceded by an HTML comment `<!-- doctest -->` (the last
    non-blank line before the fence) are run; every other block is prose for the reader.
  * In such a block a line starting with `$ ` is a command; a trailing `\\` continues it on the next
    line, and a here-document (`<<'EOF'` … `EOF`) takes the lines up to its delimiter. The lines up
    to the next `$ ` are the command's output as the guide shows it.
  * A command must exit 0 unless its first line ends with a comment `# exit N`.
  * The command's first output line in the guide must match the first line the command printed on
    standard output or on standard error, compared with runs of blanks collapsed; `…` stands for any
    text, and ids (`job_0123456789abcdef`), RFC 3339 times and dates stand for any id, time, date.
    A guide output line that is only `…` is not compared.
  * Options in the comment: `as=USER` runs the block with USER's demo token in GPURENT_TOKEN
    (instead of the operator's), `sleep=N` waits N seconds before the block (the scheduler looks at
    the queue about once a second), `nocompare` compares no output lines.
  * Paths under /tmp/guide/ are the test's work folder: the server's database is
    /tmp/guide/demo.db (so /tmp/guide/demo.db.admin-token is the operator's token) and each demo
    user's token is in /tmp/guide/USER.token (as guide section 2.4 writes them).
  * All commands of one guide run in order in one bash shell (variables and exports carry over,
    as in a reader's terminal), from the repository root, against one fresh demo server.

Usage:
  guide_doctest.py list GUIDE               print the commands (what `parity` compares)
  guide_doctest.py parity GUIDE_A GUIDE_B   both guides must hold the same commands, in order
  guide_doctest.py run GUIDE WORKDIR        run them (env: GPURENT_SERVER, GPURENT_TOKEN, PATH set
                                            by run.sh); exit 1 with a report when one fails
"""
import os
import re
import subprocess
import sys

GUIDE_DIR = "/tmp/guide"
MARKER = re.compile(r"^\s*<!--\s*doctest\b(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)(\S*)\s*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")
# What may differ between runs, replaced by wildcards when the first output line is compared.
VOLATILE = re.compile(
    r"…"
    r"|\b[a-z]{3}_[0-9a-f]{16}\b"                                  # ids: job_…, nod_…, alr_…
    r"|\bgpr_[0-9a-f]{64}\b"                                       # token secrets
    r"|\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b"          # RFC 3339 times
    r"|\b\d{4}-\d{2}-\d{2}\b"                                       # dates
)


class Command:
    def __init__(self, guide, line, text, exit_code, expected, options):
        self.guide, self.line, self.text = guide, line, text
        self.exit_code, self.expected, self.options = exit_code, expected, options


def parse_options(text):
    options = {}
    for word in text.split():
        key, _, value = word.partition("=")
        options[key] = value if value else True
    unknown = set(options) - {"as", "sleep", "nocompare"}
    if unknown:
        raise ValueError(f"unknown doctest option(s): {', '.join(sorted(unknown))}")
    return options


def extract(path):
    """The runnable commands of a guide, in order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    commands = []
    i = 0
    last_nonblank = None
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            if lines[i].strip():
                last_nonblank = lines[i]
            i += 1
            continue
        indent, ticks = fence.group(1), fence.group(2)
        marker = MARKER.match(last_nonblank or "")
        start = i
        i += 1
        body = []
        while i < len(lines) and not re.match(r"^\s*" + ticks + r"\s*$", lines[i]):
            body.append((i + 1, lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip()))
            i += 1
        if i >= len(lines):
            raise ValueError(f"{path}:{start + 1}: code block never closed")
        i += 1
        last_nonblank = None
        if not marker:
            continue
        try:
            options = parse_options(marker.group(1))
        except ValueError as e:
            raise ValueError(f"{path}:{start}: {e}") from None
        block = parse_block(path, body, options)
        if not block:
            raise ValueError(f"{path}:{start + 1}: a doctest block holds no `$ ` command")
        commands.extend(block)
    return commands


def parse_block(path, body, options):
    commands = []
    j = 0
    while j < len(body):
        lineno, line = body[j]
        if not line.startswith("$ "):
            if not commands:
                raise ValueError(f"{path}:{lineno}: a doctest block must start with a `$ ` command")
            j += 1
            continue
        first = line[2:]
        text = [first]
        j += 1
        while text[-1].endswith("\\") and j < len(body):
            text.append(body[j][1])
            j += 1
        for m in HEREDOC.finditer("\n".join(text)):
            delim = m.group(2)
            while j < len(body) and body[j][1].strip() != delim:
                text.append(body[j][1])
                j += 1
            if j >= len(body):
                raise ValueError(f"{path}:{lineno}: here-document {delim} not closed in the block")
            text.append(body[j][1])
            j += 1
        output = []
        while j < len(body) and not body[j][1].startswith("$ "):
            output.append(body[j][1])
            j += 1
        m = EXIT.search(text[0])
        exit_code = int(m.group(1)) if m else 0
        expected = None
        if output and not options.get("nocompare") and output[0].strip() not in ("", "…"):
            expected = output[0]
        commands.append(Command(path, lineno, "\n".join(text), exit_code, expected, options))
    return commands


def normalize(line):
    return " ".join(line.split())


def matches(expected, actual):
    expected, actual = normalize(expected), normalize(actual)
    parts, pos = [], 0
    for m in VOLATILE.finditer(expected):
        parts.append(re.escape(expected[pos:m.start()]))
        parts.append(".*?")
        pos = m.end()
    parts.append(re.escape(expected[pos:]))
    return re.fullmatch("".join(parts), actual) is not None


def first_line(text):
    for line in text.split("\n"):
        if line.strip():
            return line
    return ""


def run(guide, workdir):
    commands = extract(guide)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cmd_dir = os.path.join(workdir, "commands")
    os.makedirs(cmd_dir, exist_ok=True)
    script = ["cd " + sh_quote(repo)]
    current = None  # the options of the block being run
    for n, c in enumerate(commands):
        text = c.text.replace(GUIDE_DIR + "/", workdir + "/")
        with open(os.path.join(cmd_dir, f"{n}.sh"), "w", encoding="utf-8") as f:
            f.write(text + "\n")
        if c.options is not current:
            if current is not None and current.get("as"):
                script.append('export GPURENT_TOKEN="$__doctest_operator_token"')
            current = c.options
            if current.get("sleep"):
                script.append(f"sleep {float(current['sleep'])}")
            if current.get("as"):
                script.append(f'export GPURENT_TOKEN="$(cat {sh_quote(os.path.join(workdir, current["as"] + ".token"))})"')
        base = sh_quote(os.path.join(cmd_dir, str(n)))
        script.append(f"{{ source {base}.sh; }} >{base}.out 2>{base}.err </dev/null; echo $? >{base}.rc")
    script_path = os.path.join(workdir, "guide.sh")
    with open(script_path, "w", encoding="utf-8") as f:
        f.write("__doctest_operator_token=\"$GPURENT_TOKEN\"\n" + "\n".join(script) + "\n")
    subprocess.run(["bash", script_path], check=False)

    failures = 0
    for n, c in enumerate(commands):
        base = os.path.join(cmd_dir, str(n))
        try:
            with open(base + ".rc", encoding="utf-8") as f:
                rc = int(f.read().strip())
        except (OSError, ValueError):
            rc = None
        out = read(base + ".out").replace(workdir + "/", GUIDE_DIR + "/")
        err = read(base + ".err").replace(workdir + "/", GUIDE_DIR + "/")
        problems = []
        if rc != c.exit_code:
            problems.append(f"exit code {rc}, the guide expects {c.exit_code}")
        if c.expected is not None and not (matches(c.expected, first_line(out)) or matches(c.expected, first_line(err))):
            problems.append(f"first output line differs from the guide's:\n    guide: {c.expected.strip()}")
        where = f"{os.path.relpath(c.guide, repo)}:{c.line}"
        short = c.text.split("\n")[0]
        if not problems:
            print(f"ok    {where}: $ {short}")
            continue
        failures += 1
        print(f"FAIL  {where}: $ {short}")
        if "\n" in c.text:
            print("  command:\n" + indent(c.text, "    "))
        for p in problems:
            print("  " + p)
        print("  stdout:\n" + indent(clip(out), "    "))
        print("  stderr:\n" + indent(clip(err), "    "))
    print(f"{os.path.relpath(guide, repo)}: {len(commands)} commands, {failures} failed")
    return 1 if failures else 0


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def clip(text, lines=40):
    rows = text.rstrip("\n").split("\n")
    if len(rows) > lines:
        rows = rows[:lines] + [f"… ({len(rows) - lines} more lines)"]
    return "\n".join(rows) if text.strip() else "(empty)"


def indent(text, prefix):
    return "\n".join(prefix + r for r in text.split("\n"))


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "list":
            for c in extract(argv[2]):
                print(f"{c.line}: {c.text}  [exit {c.exit_code}]")
            return 0
        if len(argv) == 4 and argv[1] == "parity":
            a, b = extract(argv[2]), extract(argv[3])
            ka = [(c.text, c.exit_code, dict(c.options)) for c in a]
            kb = [(c.text, c.exit_code, dict(c.options)) for c in b]
            if ka == kb:
                print(f"parity: both guides hold the same {len(a)} commands")
                return 0
            for k in range(max(len(a), len(b))):
                if k >= len(a) or k >= len(b) or ka[k] != kb[k]:
                    left = f"{a[k].guide}:{a[k].line}: {a[k].text}" if k < len(a) else "(none)"
                    right = f"{b[k].guide}:{b[k].line}: {b[k].text}" if k < len(b) else "(none)"
                    print(f"parity: command {k + 1} differs between the guides:\n  {left}\n  {right}")
                    break
            return 1
        if len(argv) == 4 and argv[1] == "run":
            return run(argv[2], os.path.abspath(argv[3]))
    except ValueError as e:
        print(f"guide_doctest: {e}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
