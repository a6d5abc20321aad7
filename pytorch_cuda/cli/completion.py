"""`build.py completion bash|zsh|tcsh`: the shell completion script of the whole command line (every command,
option and choice), generated from the argparse parser by shtab, so it never drifts from the parser. The values
of --target (targets, aliases, groups) and --flavour come from matrix.yaml when the script is generated; bash
also completes README's `.venv/bin/python build.py ...` (and `./build.py ...`), and leaves every other command's
completion, `python`'s and `python3`'s included, as it was."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator, Sequence

from pytorch_cuda.cli.options import Session, SharedOptions, examples
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.target_selection import group_members

SHELLS = ("bash", "zsh", "tcsh")

# README's form, `.venv/bin/python build.py ...`: bash looks a compspec up by the command word as typed first, so one
# registered for the literal `.venv/bin/python` (and python3) completes that form and touches no other command:
# `python`, `python3` and any other interpreter keep their own completion. A line of that interpreter that does not
# run build.py gets no words here, and bash's default (file names) completes it.
VENV_PYTHONS = (".venv/bin/python", ".venv/bin/python3")
_VENV_PYTHON_BASH = """
# `.venv/bin/python build.py ...` (README's form): build.py's own words after the script
_pytorch_cuda_venv_python() {
  local i
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ "${COMP_WORDS[i]##*/}" == "%(script)s" ]]; then
      COMP_WORDS=("${COMP_WORDS[@]:i}")
      COMP_CWORD=$((COMP_CWORD - i))
      %(function)s
      return
    fi
    [[ "${COMP_WORDS[i]}" == -* ]] || break
  done
  COMPREPLY=()
}
complete -o bashdefault -o default -F _pytorch_cuda_venv_python %(commands)s
"""


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "completion",
        parents=[shared.matrix, shared.common],
        help="print the shell completion script (bash, zsh or tcsh)",
        description="Print the completion script of build.py for a shell, generated from the parser (shtab). "
        "bash: `build.py completion bash > ~/.local/share/bash-completion/completions/build.py`; zsh: "
        "`build.py completion zsh > ~/.zfunc/_build.py` with ~/.zfunc on $fpath. The script completes the "
        "program name it was generated for (--prog; pytorch-cuda-build for the installed command), and the "
        "values of --target and --flavour that matrix.yaml names when it is generated (generate it again "
        "after adding a target); bash's also completes README's `.venv/bin/python build.py` and `./build.py`, and "
        "leaves `python`'s and `python3`'s own completion alone. For the .venv form, source the script from "
        "~/.bashrc: bash-completion loads a completions/build.py file only for a command named build.py.",
        epilog=examples(
            "completion bash > ~/.build.py.bash  # then, in ~/.bashrc: source ~/.build.py.bash",
            "completion zsh --prog pytorch-cuda-build",
        ),
    )
    verb.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    verb.add_argument("--prog", default="build.py", help="the command the script completes (default build.py)")
    verb.set_defaults(run=completion, refuse=no_json_script)


def no_json_script(args: argparse.Namespace) -> str | None:
    """A completion script is shell text: --json has nothing to give."""
    if args.json:
        return f"--json has no JSON to give: the completion script is {args.shell} text; leave --json out"
    return None


def completion(args: argparse.Namespace, session: Session) -> int:
    import shtab

    cli: argparse.ArgumentParser = args.make_parser(args.prog)  # set by arguments.parser: no import cycle
    targets, flavours = _matrix_words(args, session)
    for action in _actions(cli):
        if "--target" in action.option_strings and targets:
            action.complete = _words("targets", targets)  # type: ignore[attr-defined]
        elif "--flavour" in action.option_strings and flavours:
            action.complete = _words("flavours", flavours)  # type: ignore[attr-defined]
    print(shtab.complete(cli, shell=args.shell), end="")
    if args.shell == "bash" and args.prog.endswith(".py"):
        function = "_shtab_" + re.sub(r"\W", "_", args.prog)
        words = {"script": args.prog.rsplit("/", 1)[-1], "function": function, "commands": " ".join(VENV_PYTHONS)}
        print(_VENV_PYTHON_BASH % words, end="")
    return 0


def _matrix_words(args: argparse.Namespace, session: Session) -> tuple[list[str], list[str]]:
    """The --target values (targets, aliases, groups) and flavours of matrix.yaml; none outside a checkout."""
    try:
        matrix = session.matrix(args)
    except UserError as error:
        session.err.print(f"note: --target and --flavour values are not completed: {error.cause}", highlight=False)
        return [], []
    return sorted({*matrix.target_names(), *group_members(matrix)}), sorted(matrix.flavours)


def _words(kind: str, words: Sequence[str]) -> dict[str, object]:
    """shtab's `.complete` for a fixed list of words, in each shell's own form."""
    quoted = " ".join(shlex.quote(w) for w in words)
    function = f"_pytorch_cuda_{kind}"
    return {
        "bash": function,
        "zsh": f"({quoted})",
        "tcsh": f"`echo {quoted}`",
        "preamble": {"bash": f'{function}() {{\n  compgen -W "{quoted}" -- "$1"\n}}'},
    }


def _actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """Every action of the parser and of its commands' parsers, at any depth."""
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _actions(sub)
