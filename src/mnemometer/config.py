"""One strict model base and one loader for every file a user writes or mnemometer reads.

Every configuration file (gate policies, conditions, suite manifests, HTTP store and agent
configs, LLM settings, sweeps) goes through :func:`load_model`: TOML or JSON in, a
validated pydantic model out, or one :class:`~mnemometer.errors.MnemometerError` line that
names the file and the field (with "did you mean" for a misspelt key).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from mnemometer._jsonl import decode, json_document, read_file
from mnemometer.errors import MnemometerError, did_you_mean


class StrictModel(BaseModel):
    """Base of every model read from or written to disk: unknown keys are errors.

    Field docstrings (the string under each field) become the JSON Schema descriptions.
    They are read when a schema is first asked for (:func:`document_fields`), not when a
    class is defined: pydantic's ``use_attribute_docstrings`` re-reads and parses each
    class's source file at import, which cost every command about 0.1 s of start-up.
    """

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The JSON Schema, with every field's docstring as its description."""
        document_fields()
        return super().model_json_schema(*args, **kwargs)


_documented: set[type] = set()


def document_fields() -> None:
    """Give every :class:`StrictModel` field its docstring as description, as pydantic would.

    The same rule as ``use_attribute_docstrings``: a field without an explicit
    ``description`` takes the docstring under it in the class that annotates it; an
    inherited field keeps its parent's. Models are then rebuilt (parents and nested models
    first), so JSON Schemas carry the descriptions. Classes defined later are documented on
    the next call.
    """
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    todo = [c for c in _subclasses(StrictModel) if c not in _documented]
    if not todo:
        return
    for cls in todo:
        docs = extract_docstrings_from_cls(cls, use_inspect=True)
        own = cls.__dict__.get("__annotations__", {})
        for name, info in cls.__pydantic_fields__.items():
            if info.description is not None:
                continue
            if name in own:
                info.description = docs.get(name)
            else:
                parent = next(
                    (b for b in cls.__mro__[1:] if name in getattr(b, "__pydantic_fields__", {})),
                    None,
                )
                if parent is not None:
                    info.description = parent.__pydantic_fields__[name].description
        _documented.add(cls)
    for _ in range(2):  # a model may nest one defined after it: the second pass sees it
        for cls in _subclasses(StrictModel):
            cls.model_rebuild(force=True)


def _subclasses(base: type) -> list[type]:
    """Every subclass of ``base``, each after its parents, in definition order."""
    out: list[type] = []
    for sub in base.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return list(dict.fromkeys(out))


M = TypeVar("M", bound=BaseModel)


@cache
def list_adapter(model: type[M]) -> TypeAdapter[list[M]]:
    """A validator of ``list[model]``, built once per model.

    Validating a whole list in one pydantic-core call costs far less than one call per
    element (dataset records, an item's metrics).
    """
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def explain(error: ValidationError, model: type[BaseModel] | None = None) -> str:
    """The first validation error as ``field.path: message`` (with "did you mean")."""
    err = error.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    if err["type"] == "extra_forbidden":
        known = _known_fields(model, err["loc"][:-1]) if model is not None else []
        hint = did_you_mean(str(err["loc"][-1]), known)
        listed = f"; known keys: {', '.join(known)}" if known else ""
        return f"unknown key {loc!r}{hint}{listed}"
    if err["type"] == "missing":
        return f"missing key {loc!r}"
    more = f" (and {len(error.errors()) - 1} more)" if len(error.errors()) > 1 else ""
    return f"{loc or '(top level)'}: {err['msg']}{more}"


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model at ``loc``, best effort."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):  # an entry of a list of tables: its model is the same
            continue
        fields = getattr(current, "model_fields", None)
        if not isinstance(part, str) or not fields or part not in fields:
            return []
        ann = fields[part].annotation
        current = next(
            (a for a in (ann, *getattr(ann, "__args__", ())) if hasattr(a, "model_fields")),
            None,
        )
        if current is None:
            return []
    return list(getattr(current, "model_fields", {}))


def validate(model: type[M], data: Any, where: str) -> M:
    """Validate ``data`` as ``model``; errors name ``where`` (a file, ``file:line``, a table).

    Raises:
        MnemometerError: ``where: field: message``.
    """
    try:
        return model.model_validate(data)
    except ValidationError as e:
        sep = " " if where.endswith("]") else ": "  # "file: [table] key: ..."
        raise MnemometerError(f"{where}{sep}{explain(e, model)}") from None


def read_document(path: str | Path, *, what: str = "file") -> dict[str, Any]:
    """Read a TOML (``.toml``) or JSON (anything else) document whose top level is a table.

    Raises:
        MnemometerError: missing, unreadable, malformed (with line and column), or not a
            table at the top level.
    """
    p = Path(path)
    text = decode(read_file(p, MnemometerError, what), p, MnemometerError)
    if p.suffix == ".toml":
        try:
            doc: Any = tomllib.loads(text, parse_float=_finite)
        except tomllib.TOMLDecodeError as e:
            raise MnemometerError(f"{p}: malformed TOML: {e}") from None
        except RecursionError:  # tomllib recurses once per nested array or inline table
            raise MnemometerError(f"{p}: malformed TOML: nested too deeply") from None
        except ValueError as e:
            raise MnemometerError(f"{p}: {e}") from None
    else:
        doc = json_document(text, p, MnemometerError)
    if not isinstance(doc, Mapping):
        raise MnemometerError(f"{p}: the top level must be a table (key = value pairs)")
    return dict(doc)


def _finite(text: str) -> float:
    # TOML allows nan and inf; no setting of ours means either, and a NaN threshold would
    # make every comparison with it silently false.
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is not allowed: write a finite number")
    return value


def load_model(
    path: str | Path, model: type[M], *, table: str | None = None, what: str = "file"
) -> M:
    """Read ``path`` (TOML or JSON) and validate it as ``model``.

    Args:
        path: the file.
        model: the pydantic model of its content.
        table: read this top-level table when present (``[llm]``, ``[agent]``); a file
            without it is validated as a whole.
        what: what the file is, for error messages (``gate policy``, ``LLM config``).

    Raises:
        MnemometerError: one line naming the file and the field.
    """
    doc = read_document(path, what=what)
    where = str(path)
    if table is not None and isinstance(doc.get(table), Mapping):
        doc, where = dict(doc[table]), f"{path}: [{table}]"
    return validate(model, doc, where)
