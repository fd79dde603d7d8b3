"""What the sub-apps share: spaCy-style config overrides, the GPU option, library errors as CLI errors."""

from contextlib import contextmanager
from typing import Any, Dict, Iterator, Type

import typer
from wasabi import msg

__all__ = ["PASS_OVERRIDES", "sub_app", "config_overrides", "gpu_option", "objective_option", "user_errors"]

# Commands that take ``--section.key value`` config overrides (as `spacy train` does) must let
# typer pass unknown options through untouched.
PASS_OVERRIDES = {"allow_extra_args": True, "ignore_unknown_options": True}


def sub_app(help: str) -> typer.Typer:
    """A sub-app of ``spacy-biolm``: help shown without arguments; docstrings as Markdown, so their
    wrapped source lines read as paragraphs."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode="markdown")


def config_overrides(ctx: typer.Context) -> Dict[str, object]:
    """The ``--section.key value`` options left over on the command line, as a config overrides dict."""
    from spacy.cli._util import parse_config_overrides

    return parse_config_overrides(ctx.args)


def gpu_option() -> Any:
    """``--gpu-id``, the default of a command's ``gpu_id: int`` parameter: the GPU every training
    and evaluation command runs on (-1: CPU)."""
    return typer.Option(-1, "--gpu-id", "-g", help="GPU id (-1: CPU)")


@contextmanager
def user_errors(*kinds: Type[Exception]) -> Iterator[None]:
    """Bad input the library reports (a missing file, a malformed NAME=PATH: by default ValueError,
    KeyError, FileNotFoundError, or the ``kinds`` given) ends the command with its message, not a traceback."""
    try:
        yield
    except kinds or (ValueError, KeyError, FileNotFoundError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
        msg.fail(str(message), exits=1)


def objective_option():
    """--objective of the HoC commands, checked before anything trains."""
    from ..evaluation.hoc import DEFAULT_OBJECTIVE
    from ..pipes.multilabel_thresholds import OBJECTIVES

    def known(value: str) -> str:
        if value not in OBJECTIVES:
            raise typer.BadParameter(f"{value!r} is not one of {list(OBJECTIVES)}")
        return value

    return typer.Option(DEFAULT_OBJECTIVE, "--objective", callback=known,
                        help="label_f1: each label's F1-best cut-off on dev; micro_f1: one cut-off for all labels, best micro F1 on dev (evaluate hoc-objectives compares them)")

