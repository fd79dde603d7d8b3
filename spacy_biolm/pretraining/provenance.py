"""What an encoder directory was made from, for the meta of a pipeline that ships it.

``export_encoder`` leaves ``encoder_source.json`` in the directory the tasks fine-tune, naming the
package or directory it copied. When that origin is the ``model/`` of a pretraining run made here
(or an encoder released with the project, which keeps its run's summary inside), the run's summary
says what the run continued from and which text files it read; each file's licences come from the
summary or, for corpora packed before licences were recorded, from the corpus catalogue
(:func:`~spacy_biolm.pretraining.sources.recorded_licences`).
"""

import json
from pathlib import Path
from typing import Dict, Optional, Union

from .loop import read_summary
from .sources import recorded_licences
from .warm_start import package_record

__all__ = ["encoder_provenance", "describe_encoder", "provenance_sources"]


def encoder_provenance(encoder_dir: Union[str, Path]) -> Dict[str, object]:
    """``{"checkpoint": {init, package, version, license}, "pretraining": {...} or None}`` of the
    HF encoder directory ``encoder_dir``: the published checkpoint it started from and, when it was
    pretrained here, the run's objective, steps, batch, sequence length and text files (name,
    SHA-1, documents per licence)."""
    encoder_dir = Path(encoder_dir)
    if not (encoder_dir / "config.json").is_file():
        raise FileNotFoundError(f"{encoder_dir}: not an HF encoder directory (no config.json)")
    exported = _read_json(encoder_dir / "encoder_source.json") or {}
    origin = Path(exported.get("path", encoder_dir))
    summary = read_summary(origin)
    if summary is None:  # a published checkpoint, as is: export_encoder recorded its package
        checkpoint = {key: exported[key] for key in ("package", "version", "license") if key in exported}
        return {"checkpoint": {"init": exported.get("init", str(encoder_dir)), **checkpoint}, "pretraining": None}
    continued = summary.get("continued_from")
    settings = _read_json(origin / "pretraining_settings.json") or {}
    training, corpus = settings.get("training", {}), settings.get("corpus", {})
    sources = recorded_licences(summary.get("sources", []))
    return {
        "checkpoint": {"init": continued, **package_record(continued)} if continued else None,
        "pretraining": {
            "objective": summary["architecture"], "steps": summary["steps"],
            "batch_size": training.get("batch_size"), "max_seq_length": corpus.get("max_seq_length"),
            "sources": sources,
        },
    }


def describe_encoder(provenance: Dict[str, object]) -> str:
    """One phrase naming the encoder for a description: its checkpoint, and the pretraining done
    here with its steps and text files."""
    checkpoint = provenance.get("checkpoint") or {}
    pretraining = provenance.get("pretraining")
    start = f"the encoder of package {_checkpoint_name(checkpoint)}" if checkpoint.get("package") else _checkpoint_name(checkpoint)
    if not pretraining:
        return start or "an encoder"
    objective = {"electra": "ELECTRA replaced-token detection", "albert": "ALBERT masked-LM and sentence order"}.get(
        str(pretraining["objective"]), str(pretraining["objective"]))
    files = ", ".join(str(source["name"]) for source in pretraining["sources"])
    done = f"{pretraining['steps']} steps of {objective} ({pretraining['batch_size']} sequences of up to " \
           f"{pretraining['max_seq_length']} WordPieces each) on {files}"
    return f"{start} continued with {done}" if start else f"an encoder pretrained from scratch with {done}"


def provenance_sources(provenance: Dict[str, object]) -> list:
    """spaCy meta ``sources`` entries for the encoder: its checkpoint and every pretraining file
    with its licences."""
    entries = []
    checkpoint = provenance.get("checkpoint") or {}
    if checkpoint:
        entries.append({"name": f"{_checkpoint_name(checkpoint)} — encoder checkpoint",
                        "license": checkpoint.get("license") or "see the checkpoint's own terms"})
    for source in (provenance.get("pretraining") or {}).get("sources", []):
        licences = source.get("licences") or {}
        entries.append({
            "name": f"{source['name']} — encoder pretraining text",
            "license": ", ".join(f"{licence} ({n} documents)" for licence, n in licences.items()) or "unrecorded",
        })
    return entries


def _checkpoint_name(checkpoint: Dict[str, object]) -> str:
    if checkpoint.get("package"):
        return f"{checkpoint['package']} {checkpoint['version']}"
    return str(checkpoint.get("init") or "")


def _read_json(path: Path) -> Optional[dict]:
    return json.loads(path.read_text(encoding="utf8")) if path.is_file() else None
