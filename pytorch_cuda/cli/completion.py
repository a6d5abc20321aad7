"""`build.py completion bash|zsh|tcsh`: the shell completion script of the whole command line (every command,
option and choice), generated from the argparse parser by shtab, so it never drifts from the parser."""

from __future__ import annotations

import argparse

from pytorch_cuda.cli.options import Session, SharedOptions, examples

SHELLS = ("bash", "zsh", "tcsh")


def register(verbs: argparse._SubParsersAction[argparse.ArgumentParser], shared: SharedOptions) -> None:
    verb = verbs.add_parser(
        "completion",
        parents=[shared.common],
        help="print the shell completion script (bash, zsh or tcsh)",
        description="Print the completion script of build.py for a shell, generated from the parser (shtab). "
        "bash: `build.py completion bash > ~/.local/share/bash-completion/completions/build.py`; zsh: "
        "`build.py completion zsh > ~/.zfunc/_build.py` with ~/.zfunc on $fpath. The script completes the "
        "program name it was generated for (--prog; pytorch-cuda-build for the installed command).",
        epilog=examples("completion bash", "completion zsh --prog pytorch-cuda-build"),
    )
    verb.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    verb.add_argument("--prog", default="build.py", help="the command the script completes (default build.py)")
    verb.set_defaults(run=completion)


def completion(args: argparse.Namespace, session: Session) -> int:
    import shtab

    from pytorch_cuda.cli.arguments import parser

    print(shtab.complete(parser(args.prog), shell=args.shell), end="")
    return 0
