#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks the project's bash scripts for checks that cannot fail under set -e.

    shell_checks.py PATH...

Each PATH is a file (checked whatever its name) or a folder (its *.sh files
and the files whose first line names bash or sh, recursively). Prints one
line per finding, `FILE:LINE: message`, and exits 1 if there was any.

What it finds:

  test-and   An && list used as a statement whose first command is a test
             ([ ... ], [[ ... ]], test ..., (( ... ))), as in `[ A ] && B`
             or `[ A ] && [ B ]`. Under set -e a false A stops nothing: the
             list just returns false and the script goes on, so the check
             cannot fail. Allowed: in the condition of if/elif/while/until,
             with || in the list (`[ A ] || fail ...`), or when the last
             command of the list is continue, break, return or exit (alone
             or ending a { ...; } group), which makes it control flow.
  negated    `! command` as a statement: set -e ignores a negated pipeline,
             so it cannot fail either. Allowed as a condition, with || or
             && after it, and as the last command of a function body (its
             status is the function's).

The scripts are tokenized and parsed (quotes, $(...), ${...}, here-documents,
[[ ]], (( )), case, groups, subshells, functions, if/while/until/for), not
matched line by line; what runs inside $(...), trap strings and sh -c
strings is not looked into.
"""
import os
import re
import sys

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=$")
TESTS = {"[", "[[", "test"}
CONTROL = {"continue", "break", "return", "exit"}
OPERATORS = ["&&", "||", ";;&", ";;", ";&", "|&", ";", "&", "|", "(", ")"]
REDIRECTIONS = ["<<<", "<<-", "<<", "&>>", "&>", ">>", ">&", "<&", ">|", "<>", ">", "<"]


class Token:
    def __init__(self, kind, text, line):
        self.kind = kind  # "word", "op", "newline", "end"
        self.text = text
        self.line = line


class Lexer:
    def __init__(self, text):
        self.s = text
        self.i = 0
        self.line = 1
        self.heredocs = []  # (delimiter, strip_tabs) waiting for the next newline

    def error(self, what):
        raise SyntaxError(f"line {self.line}: {what}")

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def advance(self, n=1):
        for _ in range(n):
            if self.i < len(self.s):
                if self.s[self.i] == "\n":
                    self.line += 1
                self.i += 1

    # --- pieces of a word ---------------------------------------------------
    def skip_single_quoted(self):
        self.advance()
        while self.i < len(self.s) and self.s[self.i] != "'":
            self.advance()
        if self.i >= len(self.s):
            self.error("unterminated '")
        self.advance()

    def skip_ansi_c_quoted(self):  # $'...' with backslash escapes
        self.advance(2)
        while self.i < len(self.s) and self.s[self.i] != "'":
            self.advance(2 if self.s[self.i] == "\\" else 1)
        if self.i >= len(self.s):
            self.error("unterminated $'")
        self.advance()

    def skip_double_quoted(self):
        self.advance()
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == '"':
                self.advance()
                return
            if c == "\\":
                self.advance(2)
            elif c == "$":
                self.skip_dollar()
            elif c == "`":
                self.skip_backquoted()
            else:
                self.advance()
        self.error('unterminated "')

    def skip_backquoted(self):
        self.advance()
        while self.i < len(self.s) and self.s[self.i] != "`":
            self.advance(2 if self.s[self.i] == "\\" else 1)
        if self.i >= len(self.s):
            self.error("unterminated `")
        self.advance()

    def skip_nested(self, close, arithmetic=False):
        """From just after an opening ( or {: up to and past the matching close.
        A command substitution's here-documents are skipped with it."""
        opening = "(" if close == ")" else "{"
        commands = close == ")" and not arithmetic
        depth = 1
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.advance(2)
            elif c == "\n":
                self.advance()
                if self.heredocs:
                    self.skip_heredoc_bodies()
            elif commands and self.s.startswith("<<<", self.i):
                self.advance(3)
            elif commands and self.s.startswith("<<", self.i):
                self.here_document_operator()
            elif c == "'" and close == ")":
                self.skip_single_quoted()
            elif c == '"':
                self.skip_double_quoted()
            elif c == "`":
                self.skip_backquoted()
            elif c == "$":
                self.skip_dollar()
            elif c == "#" and commands and (self.i == 0 or self.s[self.i - 1] in " \t\n;(|&"):
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.advance()
            elif c == opening:
                depth += 1
                self.advance()
            elif c == close:
                depth -= 1
                self.advance()
                if depth == 0:
                    return
            else:
                self.advance()
        self.error(f"unterminated {opening}")

    def skip_dollar(self):
        nxt = self.peek(1)
        if nxt == "(":
            arithmetic = self.peek(2) == "("
            self.advance(2)
            self.skip_nested(")", arithmetic)
        elif nxt == "{":
            self.advance(2)
            self.skip_nested("}")
        elif nxt == "'":
            self.skip_ansi_c_quoted()
        else:
            self.advance()

    # --- tokens -------------------------------------------------------------
    def word(self):
        start, line = self.i, self.line
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "(" and ASSIGNMENT.match(self.s[start:self.i]):  # name=(array)
                self.advance()
                self.skip_nested(")")
                continue
            if c in " \t\n;&|()":
                break
            if c in "<>":
                if self.peek(1) == "(" and self.i == start:  # process substitution
                    self.advance(2)
                    self.skip_nested(")")
                    continue
                break
            if c == "\\":
                self.advance(2)
            elif c == "'":
                self.skip_single_quoted()
            elif c == '"':
                self.skip_double_quoted()
            elif c == "`":
                self.skip_backquoted()
            elif c == "$":
                self.skip_dollar()
            else:
                self.advance()
        return Token("word", self.s[start:self.i], line)

    def here_document_operator(self):
        """At << or <<-: reads the delimiter, whose body follows the next newline."""
        strip_tabs = self.s.startswith("<<-", self.i)
        self.advance(3 if strip_tabs else 2)
        while self.peek() in (" ", "\t"):
            self.advance()
        self.heredocs.append((self.unquote(self.word().text), strip_tabs))

    def unquote(self, text):
        return text.replace("'", "").replace('"', "").replace("\\", "")

    def skip_heredoc_bodies(self):
        for delimiter, strip_tabs in self.heredocs:
            while True:
                if self.i >= len(self.s):
                    self.error(f"here-document ended by '{delimiter}' never ends")
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                body_line = self.s[self.i:end]
                self.i = min(end + 1, len(self.s))
                self.line += 1
                if (body_line.lstrip("\t") if strip_tabs else body_line) == delimiter:
                    break
        self.heredocs = []

    def tokens(self):
        out = []
        while True:
            c = self.peek()
            if c == "":
                out.append(Token("end", "", self.line))
                return out
            if c in " \t":
                self.advance()
            elif c == "\\" and self.peek(1) == "\n":
                self.advance(2)
            elif c == "#":
                while self.peek() not in ("", "\n"):
                    self.advance()
            elif c == "\n":
                out.append(Token("newline", "\n", self.line))
                self.advance()
                if self.heredocs:
                    self.skip_heredoc_bodies()
            elif c == "(" and self.peek(1) == "(":  # (( arithmetic )) is one word
                start, line = self.i, self.line
                self.advance(2)
                self.skip_nested(")", arithmetic=True)
                if self.peek() != ")":
                    self.error("(( without ))")
                self.advance()
                out.append(Token("word", self.s[start:self.i], line))
            elif c in "<>" or (c == "&" and self.peek(1) == ">"):
                if c in "<>" and self.peek(1) == "(":
                    out.append(self.word())
                    continue
                op = next(r for r in REDIRECTIONS if self.s.startswith(r, self.i))
                if op in ("<<", "<<-"):
                    self.here_document_operator()
                    continue
                self.advance(len(op))
                while self.peek() in (" ", "\t"):
                    self.advance()
                self.word()  # a redirection is not a word of the command: dropped
            elif c in ";&|()":
                op = next(o for o in OPERATORS if self.s.startswith(o, self.i))
                out.append(Token("op", op, self.line))
                self.advance(len(op))
            else:
                tok = self.word()
                if tok.text.isdigit() and self.peek() in ("<", ">"):
                    continue  # the file descriptor of a redirection (2>...)
                out.append(tok)


class AndOr:
    """One && / || list: its commands and the operators between them."""

    def __init__(self, line):
        self.line = line
        self.commands = []  # Command
        self.operators = []  # "&&" / "||"
        self.negated_first = False


class Command:
    def __init__(self, kind, first_word="", body=None):
        self.kind = kind  # "simple", "group", "compound"
        self.first_word = first_word
        self.body = body  # for a group or subshell: its list of AndOr

    def is_test(self):
        return self.kind == "simple" and (self.first_word in TESTS or self.first_word.startswith("(("))

    def is_control(self):
        if self.kind == "simple":
            return self.first_word in CONTROL
        if self.kind == "group" and self.body:
            last = self.body[-1]
            return len(last.commands) == 1 and not last.operators and last.commands[0].is_control()
        return False


class Parser:
    def __init__(self, tokens, path):
        self.t = tokens
        self.k = 0
        self.path = path
        self.findings = []

    def tok(self):
        return self.t[self.k]

    def at_word(self, *words):
        t = self.tok()
        return t.kind == "word" and t.text in words

    def at_op(self, *ops):
        t = self.tok()
        return t.kind == "op" and t.text in ops

    def skip_separators(self):
        while self.tok().kind == "newline" or self.at_op(";", "&"):
            self.k += 1

    def skip_newlines(self):
        while self.tok().kind == "newline":
            self.k += 1

    def expect_word(self, word):
        if not self.at_word(word):
            t = self.tok()
            raise SyntaxError(f"line {t.line}: expected '{word}', found '{t.text.strip()}'")
        self.k += 1

    def parse_list(self, stop_words=(), stop_ops=(), condition=False, function_body=False):
        """Statements up to a stop word or operator (not consumed)."""
        lists = []
        while True:
            self.skip_separators()
            t = self.tok()
            if t.kind == "end" or (t.kind == "word" and t.text in stop_words) or (t.kind == "op" and t.text in stop_ops):
                break
            lists.append(self.parse_and_or(condition))
        for i, a in enumerate(lists):
            self.check(a, condition, last_of_function=function_body and i == len(lists) - 1)
        return lists

    def parse_and_or(self, condition):
        a = AndOr(self.tok().line)
        while True:
            negated = False
            while self.at_word("!"):
                negated = True
                self.k += 1
            if not a.commands:
                a.negated_first = negated
            a.commands.append(self.parse_pipeline(condition))
            if self.at_op("&&", "||"):
                a.operators.append(self.tok().text)
                self.k += 1
                self.skip_newlines()
                continue
            return a

    def parse_pipeline(self, condition):
        first = self.parse_command(condition)
        while self.at_op("|", "|&"):
            self.k += 1
            self.skip_newlines()
            self.parse_command(condition)
        return first

    def parse_command(self, condition):
        t = self.tok()
        if t.kind == "op" and t.text == "(":
            self.k += 1
            body = self.parse_list(stop_ops=(")",), condition=condition)
            self.k += 1
            return Command("group", "(", body)
        if t.kind != "word":
            raise SyntaxError(f"line {t.line}: unexpected '{t.text.strip()}'")
        w = t.text
        if w == "{":
            self.k += 1
            body = self.parse_list(stop_words=("}",), condition=condition)
            self.expect_word("}")
            return Command("group", "{", body)
        if w in ("if",):
            self.k += 1
            while True:
                self.parse_list(stop_words=("then",), condition=True)
                self.expect_word("then")
                self.parse_list(stop_words=("elif", "else", "fi"), condition=condition)
                if self.at_word("elif"):
                    self.k += 1
                    continue
                if self.at_word("else"):
                    self.k += 1
                    self.parse_list(stop_words=("fi",), condition=condition)
                self.expect_word("fi")
                return Command("compound", w)
        if w in ("while", "until"):
            self.k += 1
            self.parse_list(stop_words=("do",), condition=True)
            self.expect_word("do")
            self.parse_list(stop_words=("done",), condition=condition)
            self.expect_word("done")
            return Command("compound", w)
        if w in ("for", "select"):
            self.k += 1
            while not self.at_word("do"):
                if self.tok().kind == "end":
                    raise SyntaxError(f"line {t.line}: for without do")
                self.k += 1
            self.k += 1
            self.parse_list(stop_words=("done",), condition=condition)
            self.expect_word("done")
            return Command("compound", w)
        if w == "case":
            self.k += 2  # case WORD
            self.skip_newlines()
            self.expect_word("in")
            while True:
                self.skip_newlines()
                if self.at_word("esac"):
                    self.k += 1
                    return Command("compound", w)
                if self.at_op("("):
                    self.k += 1
                while not self.at_op(")"):  # the pattern
                    if self.tok().kind == "end":
                        raise SyntaxError(f"line {t.line}: case without esac")
                    self.k += 1
                self.k += 1
                self.parse_list(stop_words=("esac",), stop_ops=(";;", ";&", ";;&"), condition=condition)
                if self.at_op(";;", ";&", ";;&"):
                    self.k += 1
        if w == "function":
            self.k += 2
            if self.at_op("("):
                self.k += 2
            self.skip_newlines()
            return self.function_body(condition)
        if self.t[self.k + 1].kind == "op" and self.t[self.k + 1].text == "(":  # NAME () BODY
            self.k += 3
            self.skip_newlines()
            return self.function_body(condition)
        if w == "[[":
            while not self.at_word("]]"):
                if self.tok().kind == "end":
                    raise SyntaxError(f"line {t.line}: [[ without ]]")
                self.k += 1
            self.k += 1
            return Command("simple", w)
        # A simple command: words up to an operator or the end of the line.
        while self.tok().kind == "word":
            self.k += 1
        return Command("simple", w)

    def function_body(self, condition):
        if self.at_word("{"):
            self.k += 1
            self.parse_list(stop_words=("}",), function_body=True)
            self.expect_word("}")
        elif self.at_op("("):
            self.k += 1
            self.parse_list(stop_ops=(")",), function_body=True)
            self.k += 1
        else:
            self.parse_command(condition)
        return Command("compound", "function")

    def check(self, a, condition, last_of_function):
        if condition or "||" in a.operators:
            return
        if "&&" in a.operators and a.commands[0].is_test() and not a.commands[-1].is_control():
            self.findings.append((a.line, "a test and && as a statement: a false test stops nothing under set -e"))
        elif a.negated_first and not a.operators and not last_of_function:
            self.findings.append((a.line, "a negated command as a statement: set -e ignores it"))


HOW_TO_FIX = """\
shell_checks: such a check cannot fail. Write `[ A ] || fail "..."` (fail
being the script's own), `if [ A ]; then B; fi` when B is meant to run only
sometimes, and `if cmd; then fail "..."; fi` instead of `! cmd`."""


def check_file(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        parser = Parser(Lexer(text).tokens(), path)
        parser.parse_list()
        if parser.tok().kind != "end":
            raise SyntaxError(f"line {parser.tok().line}: unexpected '{parser.tok().text.strip()}'")
    except SyntaxError as e:
        return [f"{path}: cannot parse: {e.msg}"]
    lines = text.split("\n")
    return [f"{path}:{line}: {message}: {lines[line - 1].strip()[:100]}" for line, message in sorted(parser.findings)]


def is_shell_script(path):
    if path.endswith(".sh"):
        return True
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and (b"bash" in first or first.rstrip().endswith(b"/sh"))


def scripts_in(path):
    if os.path.isfile(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(root, name)
            if is_shell_script(p):
                found.append(p)
    return found


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip().split("\n\n")[1].strip())
        return 2 if len(argv) < 2 else 0
    problems, scripts = [], 0
    for arg in argv[1:]:
        if not os.path.exists(arg):
            print(f"shell_checks: {arg}: no such file or folder", file=sys.stderr)
            return 2
        for p in scripts_in(arg):
            scripts += 1
            problems += check_file(p)
    for p in problems:
        print(p)
    if problems:
        print(HOW_TO_FIX)
    print(f"shell_checks: {scripts} scripts, {len(problems)} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
