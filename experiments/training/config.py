"""One config idiom for the three learners' commands (``experiments.train``, ``experiments.exit``, ``experiments.dmc``).

A learner's config is a dataclass derived from ``RunConfig``: ``game``, ``options``, then one field per setting, each
made by ``flag``. From the class alone come the command's flags (``add_flags``, each help ending with its default and
the games whose preset changes it, ``experiments.training.presets``); a new run's config (``make``: the preset under
the values given, each checked by its field's type and by the learner's ``resolve``); ``--resume`` (``resumed``: the
run's config.json checked the same way, older versions' read through ``COMPAT``, and any flag that differs from it
refused, but for a larger ``BUDGET``); and config.json itself (``to_json``). Flags that are no part of a run's config
are named by ``RunConfig.RUN_FLAGS``.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from experiments.training.run_folder import RunFolder
from jericho_env.registry import known_game_ids, make_rules

C = TypeVar("C", bound="RunConfig")


def flag(text: str, kind: Any = None, **argparse_kw: Any) -> Any:
    """A config field that is also the flag ``--field-name``: its help, its argparse type (an ``experiments.cli``
    parser, which also checks config.json's value) and any other ``add_argument`` keyword."""
    return dataclasses.field(metadata={"help": text, "type": kind, **argparse_kw})


@dataclasses.dataclass(frozen=True)
class Compat:
    """How config.json of older versions reads: fields added since, renamed, or retired."""

    added: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # field -> the value runs before it had
    renamed: Mapping[str, str] = dataclasses.field(default_factory=dict)  # old name -> new name
    retired: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # field -> the only value this version runs
    noted: tuple[str, ...] = ()  # retired fields whose other values are noted, not refused

    def apply(self, saved: dict[str, Any], where: str) -> dict[str, Any]:
        """``saved`` (a config.json's settings) as this version's fields; ``ValueError`` for a retired value."""
        out = {self.renamed.get(k, k): v for k, v in saved.items()}
        for key, only in self.retired.items():
            if key in out and out.pop(key) != only:
                if key not in self.noted:
                    raise ValueError(f"{where}: the run's {key} is retired; this version runs {key} {only} only "
                                     "(docs/history/retired.md)")  # fmt: skip
                print(f"{where}: this version trains with {key} {only} only (docs/history/retired.md)")
        return {**self.added, **out}


@dataclasses.dataclass
class RunConfig:
    """What every learner's config holds first; subclasses add their settings (``flag`` fields) and say, as class
    attributes, their command, presets, budget and what older config.json files hold (``Compat``)."""

    game: str  # the game id (the command's first argument)
    options: dict[str, Any]  # the game's options as given (--option KEY=VALUE)

    COMMAND: ClassVar[str] = ""  # python -m COMMAND
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}  # "default" and what each game changes
    BUDGET: ClassVar[str] = ""  # the field --resume may raise (or lower to what the run has done: ``done``)
    COMPAT: ClassVar[Compat] = Compat()
    RUN_FLAGS: ClassVar[tuple[str, ...]] = ("--option", "--out", "--resume", "--quiet")  # flags that are no field
    # for ``start``: the kind of run --out must not hold, the file a run writes once begun, what its lack means
    STARTED: ClassVar[tuple[str, str, str]]

    # ------------------------------------------------------------------------------------------ the fields
    @classmethod
    def settings(cls) -> list[dataclasses.Field[Any]]:
        """The fields that are flags: every one but ``game`` and ``options``."""
        return [f for f in dataclasses.fields(cls) if f.name not in ("game", "options")]

    @staticmethod
    def flag_of(name: str) -> str:
        """``learning_rate`` -> ``--learning-rate``."""
        return "--" + name.replace("_", "-")

    @classmethod
    def preset(cls, game: str) -> dict[str, Any]:
        """The ``default`` entry updated with the game's."""
        return {**cls.PRESETS["default"], **cls.PRESETS.get(game, {})}

    @classmethod
    def per_game(cls, name: str) -> str:
        """``name``'s default and the games that change it, for ``--help``: ``"200000; grid: 150000, ..."``."""
        default = cls.PRESETS["default"][name]
        games = [f"{g}: {e[name]}" for g, e in cls.PRESETS.items() if g != "default" and name in e]
        return ("none" if default is None else str(default)) + (f"; {', '.join(games)}" if games else "")

    @classmethod
    def add_flags(cls, parser: argparse.ArgumentParser) -> None:
        """One flag per setting, not given: None (the preset's value)."""
        for f in cls.settings():
            kw = {k: v for k, v in f.metadata.items() if k != "help" and v is not None}
            parser.add_argument(cls.flag_of(f.name), default=None, help=f"{f.metadata['help']} "
                                f"(default {cls.per_game(f.name)})", **kw)  # fmt: skip

    @classmethod
    def given(cls, args: argparse.Namespace) -> dict[str, Any]:
        """The settings given on the command line (None where a flag was not given)."""
        return {f.name: getattr(args, f.name, None) for f in cls.settings()}

    # ------------------------------------------------------------------------------------------ checked once
    @classmethod
    def check_values(cls, values: Mapping[str, Any]) -> None:
        """``ValueError`` for the first value its field's type or choices refuse (None only for optional fields)."""
        for f in cls.settings():
            v, name = values[f.name], f"{f.name} ({cls.flag_of(f.name)})"
            if v is None:
                if "None" not in str(f.type):
                    raise ValueError(f"{name} must be given, got None")
                continue
            choices, kind = f.metadata.get("choices"), f.metadata.get("type")
            if choices is not None and v not in choices:
                raise ValueError(f"{name} takes one of {', '.join(map(str, choices))}, got {v!r}")
            if kind is None:
                if not isinstance(v, str):
                    raise ValueError(f"{name} must be text, got {v!r}")
                continue
            try:
                parsed = kind(str(v))
            except argparse.ArgumentTypeError as e:
                raise ValueError(f"{name}: {e}") from None
            if isinstance(v, (bool, str)) or parsed != v:
                raise ValueError(f"{name} must be a number ({type(parsed).__name__}), got {v!r}")

    @classmethod
    def resolve(cls, game: str, options: dict[str, Any], values: dict[str, Any], explicit: set[str]) -> dict[str, Any]:
        """The learner's own checks of a complete set of values (``explicit``: those given), which may settle values
        that depend on the game or on others."""
        return values

    @classmethod
    def build(
        cls: type[C],
        game: str,
        options: Mapping[str, Any] | None,
        values: dict[str, Any],
        explicit: Collection[str] = (),
    ) -> C:
        """The config of ``values`` (every setting), checked: the game and options, each value, then ``resolve``."""
        options = dict(options or {})
        make_rules(game, **options)  # unknown games and bad options fail here, naming what is allowed
        cls.check_values(values)
        return cls(game=game, options=options, **cls.resolve(game, options, dict(values), set(explicit)))

    @classmethod
    def make(cls: type[C], game: str, options: Mapping[str, Any] | None = None, **given: Any) -> C:
        """A new run's config: the game's preset with the ``given`` values that are not None on top."""
        explicit = {k for k, v in given.items() if v is not None}
        values = cls.preset(game)
        unknown = sorted(set(given) - set(values))
        if unknown:
            raise ValueError(f"unknown {cls.COMMAND} settings {', '.join(unknown)}; known: {', '.join(values)}")
        return cls.build(game, options, {**values, **{k: given[k] for k in explicit}}, explicit)

    def to_json(self) -> dict[str, Any]:
        """What config.json holds: every field."""
        return dataclasses.asdict(self)

    # ------------------------------------------------------------------------------------------ --resume
    @classmethod
    def saved(cls: type[C], folder: str | Path, game: str) -> C:
        """The config of the run in ``folder`` (its config.json through ``COMPAT``), checked as a new one is."""
        saved = dict(RunFolder.saved_config(folder, game))
        saved.pop("game", None)
        options = saved.pop("options", {})
        where = f"--resume {str(folder)!r}"
        if not isinstance(options, dict):
            raise ValueError(f"{where}: config.json's options must be a JSON object, got {options!r}")
        saved = cls.COMPAT.apply(saved, where)
        unknown = sorted(set(saved) - {f.name for f in cls.settings()})
        if unknown:
            raise ValueError(
                f"{where}: config.json has unknown field(s) {', '.join(unknown)} (not a run of python -m {cls.COMMAND})"
            )
        return cls.build(game, options, {**cls.preset(game), **saved}, set(saved))

    @classmethod
    def resumed(cls: type[C], args: argparse.Namespace, game: str) -> C:
        """The config of ``--resume``'s run; flags that differ from it refused; a larger budget extends it (and is
        written to config.json)."""
        cfg = cls.saved(args.resume, game)
        cfg.refuse_changes(args)
        more = getattr(args, cls.BUDGET, None)
        if more is not None and more != getattr(cfg, cls.BUDGET):
            setattr(cfg, cls.BUDGET, more)
            RunFolder(Path(args.resume)).save_config(cfg.to_json())
        return cfg

    def done(self, folder: Path) -> int:
        """The lowest budget ``--resume`` takes (a learner whose run can stop early says what ``folder``'s has done)."""
        return int(getattr(self, self.BUDGET))

    def refuse_changes(self, args: argparse.Namespace) -> None:
        """``ValueError`` naming the first flag given beside ``--resume`` that differs from the run's config.json
        (``--option`` compared as the game resolves it); the budget may only grow."""
        budget = getattr(args, self.BUDGET, None)
        floor = None if budget is None else self.done(Path(args.resume))
        if budget is not None and budget < floor:
            raise ValueError(f"{self.flag_of(self.BUDGET)} {budget} is below the run's {floor}: "
                             "--resume extends, never cuts")  # fmt: skip
        changed = [(self.flag_of(k), repr(v), getattr(self, k)) for k, v in self.given(args).items()
                   if v is not None and k != self.BUDGET and v != getattr(self, k)]  # fmt: skip
        option = dict(getattr(args, "option", None) or [])
        if option:
            saved = make_rules(self.game, **self.options).options
            if make_rules(self.game, **{**self.options, **option}).options != saved:
                changed.append(("--option", " ".join(f"{k}={v}" for k, v in option.items()), dict(saved)))
        if changed:
            name, value, theirs = changed[0]
            raise ValueError(f"{name} {value} differs from the run's config.json ({theirs!r}): --resume continues "
                             f"the run as it was configured (only a larger {self.flag_of(self.BUDGET)} extends it); "
                             "start a new run to change it")  # fmt: skip

    # ------------------------------------------------------------------------------------------ the command
    @classmethod
    def parser(
        cls, doc: str | None, more: str = "", option: str = "game option", **helps: str
    ) -> argparse.ArgumentParser:
        """The command's parser: the game (``more``: what it takes beside the games), a flag per setting, then
        ``RUN_FLAGS`` (``option``, ``helps``: ``resume``'s and ``quiet``'s help where it is not the usual)."""
        from experiments.cli import cli_parser, parse_option

        p = cli_parser(cls.COMMAND, doc)
        p.add_argument("game", help=f"which game: {', '.join(known_game_ids())}{more}")
        cls.add_flags(p)
        p.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE", help=option)
        kind = cls.COMMAND.removeprefix("experiments.")
        p.add_argument("--out", default=None, help=f"run folder (default runs/{kind}/GAME-TIME)")
        resume = helps.get("resume", "continue the run in this folder")
        p.add_argument("--resume", default=None, metavar="RUN_FOLDER", help=resume)
        p.add_argument("--quiet", action="store_true", help=helps.get("quiet", "no progress bars"))
        return p

    @classmethod
    def start(
        cls: type[C], args: argparse.Namespace, argv: list[str] | None, check: Any = None
    ) -> tuple[C, Path, bool, Any]:
        """(config, folder, resuming, what ``check(cfg, resuming)`` returned), checked before any folder is made; a
        ``--resume`` whose run wrote no ``STARTED`` file yet starts afresh there. The session is recorded."""
        from experiments.cli import check_out
        from experiments.play.report import run_folder
        from experiments.training.provenance import record_session

        run_kind, marker, nothing = cls.STARTED
        resume = bool(args.resume)
        if not resume:
            check_out(args.out, "--out", run_kind=run_kind, resume_hint=True)
        cfg = cls.from_args(args, args.game)
        checked = None if check is None else check(cfg, resume)
        if resume:
            folder = Path(args.resume)
            if not (folder / marker).is_file():
                print(f"--resume {folder}: {nothing}; starting the run afresh in that folder")
                resume = False
        else:
            folder = run_folder(cls.COMMAND.removeprefix("experiments."), args.game, args.out)
            RunFolder(folder).save_config(cfg.to_json())
        record_session(folder, cls.COMMAND, argv)
        return cfg, folder, resume, checked

    @classmethod
    def from_args(cls: type[C], args: argparse.Namespace, game: str) -> C:
        """The run's config, checked before any work: ``--resume``'s, or the flags on the game's preset."""
        if getattr(args, "resume", None):
            return cls.resumed(args, game)
        return cls.make(game, dict(getattr(args, "option", None) or []), **cls.given(args))
