#!/usr/bin/env python3
"""Writes smartstackctl(1), a roff man page, from the command tree the binary itself describes.

    scripts/smartstackctl-manual.py PATH/TO/smartstackctl OUTPUT.1

The command definitions (swift-argument-parser) are the single source: `smartstackctl
--experimental-dump-help` prints every command, abstract, discussion, option and argument as JSON, and this
script lays them out as man(7) sections. No network, standard library only.
"""
import json
import subprocess
import sys

GLOBAL = {"address", "json", "help"}


def roff(text):
    """Text escaped for roff: backslashes, leading dots and quotes, dashes."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def flag_text(argument):
    names = argument.get("names") or []
    long = [f"--{name['name']}" for name in names if name["kind"] == "long"]
    short = [f"-{name['name']}" for name in names if name["kind"] == "short"]
    text = ", ".join(short + long) or argument.get("valueName", "")
    if argument["kind"] == "option":
        text += f" {argument.get('valueName', 'value').upper().replace('-', '_')}"
    return text


def synopsis(path, command):
    parts = []
    for argument in command.get("arguments", []):
        if not argument.get("shouldDisplay", True) or argument.get("valueName") in GLOBAL:
            continue
        if argument["kind"] == "positional":
            text = argument["valueName"].upper()
        else:
            text = flag_text(argument).split(", ")[-1]
        if argument.get("isRepeating"):
            text += "..."
        parts.append(f"[{text}]" if argument.get("isOptional") else text)
    return " ".join(path + parts)


def commands(command, path):
    """Every runnable command below `command`, depth first, with its path."""
    for sub in command.get("subcommands", []):
        if not sub.get("shouldDisplay", True) or sub["commandName"] == "help":
            continue
        here = path + [sub["commandName"]]
        if sub.get("subcommands"):
            yield from commands(sub, here)
        else:
            yield here, sub


def main():
    binary, output = sys.argv[1], sys.argv[2]
    tree = json.loads(subprocess.run([binary, "--experimental-dump-help"], capture_output=True, text=True,
                                     check=True).stdout)["command"]
    discussion = tree.get("discussion", "")
    body, _, exit_text = discussion.partition("Exit status: ")
    out = [
        '.TH SMARTSTACKCTL 1 "" "smartstackd" "User Commands"',
        ".SH NAME",
        "smartstackctl \\- " + roff(tree.get("abstract", "")),
        ".SH SYNOPSIS",
        ".B smartstackctl",
        "[\\fB\\-\\-address\\fR \\fIunix:PATH\\fR] [\\fB\\-\\-json\\fR] \\fICOMMAND\\fR [\\fIARGUMENTS\\fR]",
        ".SH DESCRIPTION",
        roff(body.strip()),
        ".SH GLOBAL OPTIONS",
    ]
    for argument in tree.get("arguments", []) + [
        {"kind": "option", "names": [{"kind": "long", "name": "address"}], "valueName": "address",
         "abstract": "The service's address, unix:PATH (default: the user's or the system's socket)."},
        {"kind": "flag", "names": [{"kind": "long", "name": "json"}],
         "abstract": "Print one JSON document (watch: one per line) instead of tables."},
    ]:
        out += [".TP", "\\fB" + roff(flag_text(argument)) + "\\fR", roff(argument.get("abstract", ""))]
    out.append(".SH COMMANDS")
    for path, command in commands(tree, []):
        out += [".SS " + roff(" ".join(path)), ".B " + roff(synopsis(["smartstackctl"] + path, command)), ".PP",
                roff(command.get("abstract", ""))]
        if command.get("discussion"):
            out += [".PP", roff(command["discussion"])]
        for argument in command.get("arguments", []):
            if not argument.get("shouldDisplay", True) or argument.get("valueName") in GLOBAL:
                continue
            name = argument["valueName"].upper() if argument["kind"] == "positional" else flag_text(argument)
            out += [".TP", "\\fB" + roff(name) + "\\fR", roff(argument.get("abstract", ""))]
    out.append(".SH EXIT STATUS")
    for item in exit_text.strip().rstrip(".").split("; "):
        code, _, meaning = item.partition(" ")
        out += [".TP", "\\fB" + code + "\\fR", roff(meaning)]
    out += [
        ".SH ENVIRONMENT",
        ".TP", "\\fBNO_COLOR\\fR", "When set (to anything), output is never coloured.",
        ".TP", "\\fBXDG_RUNTIME_DIR\\fR",
        "The default socket of a user's service is \\fI$XDG_RUNTIME_DIR/smartstack/io.smartstack\\fR.",
        ".SH SEE ALSO",
        "\\fBsmartstackd\\fR(8), \\fBjournalctl\\fR(1), \\fBsystemctl\\fR(1), \\fBvarlinkctl\\fR(1)",
    ]
    with open(output, "w") as handle:
        handle.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
