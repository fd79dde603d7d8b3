"""Test helpers shared by the package's tests and ``tests/``: small synthetic corpora, the one
tiny-encoder builder, and QA pipeline builders.

The pytest fixtures built on these live once, in the repository's root ``conftest.py``
(``tiny_qa_encoder``, ``relation_encoder``, ``tiny_encoder``, ``bio_text``, ...). This module imports
neither pytest nor transformers at import time, so benchmarks and scripts can use it too.

The encoders are randomly initialised: the tests need the formats and the plumbing, not the quality.
"""

import random
import string
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

__all__ = [
    "device_params",
    "record_input_devices",
    "REPO",
    "SHARED",
    "SHARED_DATA",
    "TINY_WORDS",
    "RELATION_SENTENCES",
    "MICRO_PRETRAINING_CONFIG",
    "make_tiny_encoder",
    "bio_text_documents",
    "write_bio_text",
    "disease_sentences",
    "write_conll",
    "transformer_pipeline",
    "make_qa_nlp",
    "overfit",
    "RELEASE_SENTENCE",
    "make_tiny_release",
    "make_tiny_per_task_release",
    "make_tiny_one_encoder_release",
]

#: The repository checkout (configs/, project.yml, benchmarks/) and the shared data mirror beside it.
REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_DATA = SHARED / "data"

#: Whole words of the fixed tiny vocabulary, so QA test sentences tokenise into words, not characters.
TINY_WORDS = (
    "Is BRCA1 a gene ? What causes cancer Germline mutations in cause hereditary breast the of and "
    "is are not yes no protein TP53 disease tumour suppressor which Which drug treats tamoxifen"
).split()

#: Text for a domain vocabulary trained on the relation corpora's placeholders and words.
RELATION_SENTENCES = (
    "Mutations in @GENE$ cause @DISEASE$ in humans .",
    "No association of @GENE$ with @DISEASE$ was found .",
    "BC6ENTC inhibits BC6ENTG but not BC6OTHER .",
    "BRCA1 variants and breast cancer risk .",
)

_SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_CHARACTERS = list(string.ascii_letters + string.digits + string.punctuation) + ["β", "ï", "é", "α"]


def make_tiny_encoder(
    out: Path,
    vocab_sentences: Optional[Sequence[str]] = None,
    vocab_size: int = 150,
    layers: int = 2,
    hidden: int = 32,
    max_positions: int = 512,
    seed: int = 0,
) -> Path:
    """Write a random ELECTRA discriminator and its fast cased WordPiece tokenizer to ``out``.

    The weights are saved as ``ElectraForPreTraining``, the format ``spacy-biolm pretrain`` exports
    (``pretrained/<name>/model``); ``AutoModel`` loads the encoder from it as from any HF directory.

    vocab_sentences: without them, a fixed small vocabulary (:data:`TINY_WORDS`, every ASCII
        character and its ``##`` continuation) in which any text tokenises. With them, a domain
        vocabulary trained on the sentences by ``train_vocab`` (``vocab_size`` pieces), as the
        pretraining step makes it: e.g. on :data:`RELATION_SENTENCES` the placeholders ``@GENE$``
        and ``BC6ENTC`` tokenise into pieces of that vocabulary, never ``[UNK]``.
    seed: torch's seed for the weights, so a fixture gives the same encoder in every session.
    """
    import torch
    from transformers import AutoTokenizer, BertTokenizerFast, ElectraConfig, ElectraForPreTraining

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if vocab_sentences is None:
        vocab = _SPECIAL_TOKENS + sorted(set(TINY_WORDS)) + _CHARACTERS + ["##" + c for c in _CHARACTERS]
        (out / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n", encoding="utf8")
        tokenizer = BertTokenizerFast(vocab_file=str(out / "vocab.txt"), do_lower_case=False, strip_accents=False)
        tokenizer.save_pretrained(out)
    else:
        from .pretraining.vocab import train_vocab

        with tempfile.TemporaryDirectory() as tmp:
            text = Path(tmp) / "vocab_sentences.txt"
            text.write_text("\n".join(vocab_sentences) + "\n", encoding="utf8")
            train_vocab([text], out, vocab_size=vocab_size)
        tokenizer = AutoTokenizer.from_pretrained(out)
    config = ElectraConfig(
        vocab_size=len(tokenizer), embedding_size=16, hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=max_positions,
    )
    torch.manual_seed(seed)
    ElectraForPreTraining(config).save_pretrained(out)
    return out


_BIO_TEXT_GENES = ["BRCA1", "BRCA2", "TP53", "EGFR", "KRAS", "HER2", "CDKN2A", "APOE4", "PTEN", "MYC"]
_BIO_TEXT_DISEASES = [
    "hereditary breast cancer",
    "ovarian adenocarcinoma",
    "familial hypercholesterolemia",
    "Alzheimer's disease",
    "non-small cell lung cancer",
    "colorectal carcinoma",
]
_BIO_TEXT_CYTOKINES = ["IL-6", "interleukin-6", "TNF-alpha", "IFN-γ", "IL-1β"]
_BIO_TEXT_TEMPLATES = [
    "Germline mutations in {gene} were associated with {disease} in {n} patients (p < 0.0{d}).",
    "Expression of {gene} was reduced by {n}% after treatment with {dose} µM cisplatin.",
    "Serum {cyto} levels were elevated in patients with {disease} [{n} pg/mL; 95% CI {d}-{n}].",
    "We sequenced {gene} and {gene2} in a cohort of {n} women with {disease}.",
    "Acetylcholinesterase inhibitors decreased {cyto} secretion by {n}% in vitro.",
    "Immunohistochemistry showed {gene} overexpression in {n} of {m} tumours.",
    "The {gene}-mediated pathway regulates {cyto}-induced apoptosis; see Fig. {d}.",
    "Naïve T cells produced {cyto} after stimulation (n = {n}).",
]


def bio_text_documents(n_docs: int, seed: int, long_line_words: int = 0) -> str:
    """Synthetic but realistic biomedical text in the pretraining format (a sentence per line, a
    blank line between documents); with ``long_line_words``, a last document of one line that
    long (a whole abstract on one line)."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        sents = []
        for _ in range(rng.randint(3, 7)):
            genes = rng.sample(_BIO_TEXT_GENES, 2)
            sents.append(
                rng.choice(_BIO_TEXT_TEMPLATES).format(
                    gene=genes[0],
                    gene2=genes[1],
                    disease=rng.choice(_BIO_TEXT_DISEASES),
                    cyto=rng.choice(_BIO_TEXT_CYTOKINES),
                    n=rng.randint(2, 950),
                    m=rng.randint(951, 2000),
                    d=rng.randint(1, 9),
                    dose=rng.choice(["0.5", "2", "10"]),
                )
            )
        docs.append("\n".join(sents))
    if long_line_words:
        docs.append(" ".join(
            rng.choice(["BRCA1", "mutation", "carriers", "showed", "reduced", "TP53", "(n = 12)."])
            for _ in range(long_line_words)
        ))
    return "\n\n".join(docs) + "\n"


def write_bio_text(path: Path, n_docs: int = 80, seed: int = 0) -> Path:
    """:func:`bio_text_documents` written to ``path``."""
    Path(path).write_text(bio_text_documents(n_docs, seed), encoding="utf8")
    return Path(path)


#: A pretraining config that trains in a second; format it with ``text`` and ``vocab`` paths.
MICRO_PRETRAINING_CONFIG = """
[paths]
text = "{text}"
vocab = "{vocab}"

[system]
seed = 0
device = "cpu"
threads = 1

[corpus]
max_seq_length = 32

[model]
embedding_size = 16
hidden_size = 32
num_layers = 2
num_heads = 2
intermediate_size = 64
generator_fraction = 0.5
max_position_embeddings = 64
dropout = 0.1

[objective]

[training]
max_steps = 8
batch_size = 8
learning_rate = 0.001
warmup_fraction = 0.25
log_every = 1
checkpoint_every = 4

[export]
release_dtype = ""
"""

_NER_GENES = ["BRCA1", "BRCA2", "TP53", "APC", "PTEN", "MLH1"]
_NER_DISEASES = ["hereditary breast cancer", "colorectal cancer", "ovarian cancer", "Cowden syndrome"]


def disease_sentences(n: int, seed: int = 0) -> List[Tuple[List[str], List[Tuple[int, int]]]]:
    """``n`` simple disease sentences as (words, disease word-spans), tokenised as the corpora are."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        gene, disease = rng.choice(_NER_GENES), rng.choice(_NER_DISEASES)
        prefix = ["Germline", "mutations", "in", gene, "cause"]
        words = prefix + disease.split() + ["."]
        out.append((words, [(len(prefix), len(prefix) + len(disease.split()))]))
    return out


def write_conll(path: Path, sentences) -> Path:
    """Write (words, spans) sentences as a typed CoNLL BIO file (label ``Disease``)."""
    lines = []
    for words, spans in sentences:
        tags = ["O"] * len(words)
        for start, end in spans:
            tags[start] = "B-Disease"
            for i in range(start + 1, end):
                tags[i] = "I-Disease"
        lines += [f"{w}\t{t}" for w, t in zip(words, tags)] + [""]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf8")
    return Path(path)


def transformer_pipeline(encoder_dir: Path, **model_config):
    """``spacy.blank("en")`` with a spacy-transformers ``transformer`` on ``encoder_dir``,
    initialised: how a user plugs a pretrained encoder into spaCy."""
    import spacy

    nlp = spacy.blank("en")
    model = {
        "@architectures": "spacy-transformers.TransformerModel.v3",
        "name": str(encoder_dir),
        "tokenizer_config": {"use_fast": True},
        **model_config,
    }
    nlp.add_pipe("transformer", config={"model": model})
    nlp.initialize()
    return nlp


_QA_ARCHITECTURES = {
    "yes_no": "spacy-biolm.YesNoClassifier.v1",
    "answer_span": "spacy-biolm.AnswerSpanModel.v1",
    "answer_reranker": "spacy-biolm.AnswerRerankerModel.v1",
}


def make_qa_nlp(encoder_dir: Path, component: str, window: int = 32, stride: int = 8,
                architecture: Optional[str] = None, **settings):
    """A blank English pipeline (corpus tokenizer) with one QA component on ``encoder_dir``
    (its default architecture unless ``architecture`` names another)."""
    import spacy

    if component not in _QA_ARCHITECTURES:
        raise ValueError(f"unknown QA component {component!r}; expected one of {sorted(_QA_ARCHITECTURES)}")
    nlp = spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})
    encoder = {"@architectures": "spacy-biolm.PairEncoder.v1", "name": str(encoder_dir), "window": window,
               "stride": stride}
    config = {"model": {"@architectures": architecture or _QA_ARCHITECTURES[component], "encoder": encoder}, **settings}
    nlp.add_pipe(component, config=config)
    return nlp


def overfit(nlp, examples, steps: int = 30, learn_rate: float = 0.003):
    """Initialise ``nlp`` on ``examples`` and update on them ``steps`` times (seeded)."""
    from spacy.util import fix_random_seed
    from thinc.api import Adam

    fix_random_seed(0)
    nlp.initialize(lambda: examples)
    optimizer = Adam(learn_rate)
    losses = {}
    for _ in range(steps):
        losses = nlp.update(examples, sgd=optimizer, drop=0.0)
    return losses


def device_params() -> list:
    """``["cpu", "gpu"]`` for ``pytest.mark.parametrize("device", device_params(), indirect=True)``
    (the root conftest's ``device`` fixture); "gpu" is skipped where CuPy sees no GPU, so the same
    tests run on a lent GPU unchanged. Imports pytest when called, not at import."""
    import pytest
    from thinc.util import has_cupy_gpu

    return ["cpu", pytest.param("gpu", marks=pytest.mark.skipif(not has_cupy_gpu, reason="no GPU that CuPy sees"))]


def record_input_devices(hf_model) -> list:
    """Devices of the ``input_ids`` each forward call of the torch module ``hf_model`` receives."""
    seen: list = []
    hf_model.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(kwargs["input_ids"].device), with_kwargs=True
    )
    return seen


#: The sentence the tiny release's task pipelines are initialised on (README's example sentence).
RELEASE_SENTENCE = "Germline mutations in BRCA1 cause hereditary breast cancer."


def _release_examples(nlp, task: str) -> list:
    """A few gold Examples of :data:`RELEASE_SENTENCE` for initialising the ``task`` pipeline: its
    labels and shapes (every QA class present, as class_weights="balanced" needs)."""
    from spacy.training import Example

    from .corpora.hoc import HALLMARKS
    from .doc_data import make_question_doc
    from .pipes.answer_reranker.scorer import GOLD_KEY

    gene, disease = (22, 27), (34, 58)
    if task in ("ner", "ner_gene", "relations", "hoc", "multitask"):
        doc = nlp.make_doc(RELEASE_SENTENCE)
        gold = doc.copy()
        if task == "ner":
            gold.ents = [gold.char_span(*disease, "DISEASE")]
        elif task == "ner_gene":
            gold.ents = [gold.char_span(*gene, "GENE")]
        elif task in ("relations", "multitask"):
            doc.ents = [doc.char_span(*gene, "GENE"), doc.char_span(*disease, "DISEASE")]
            gold.ents = [gold.char_span(*gene, "GENE"), gold.char_span(*disease, "DISEASE")]
        if task in ("hoc", "multitask"):
            gold.cats = {h: float(i == 0) for i, h in enumerate(HALLMARKS)}  # every hallmark a label
        return [Example(doc, gold)]
    examples = []
    for answer in ("yes", "no"):
        doc = make_question_doc(nlp, "Which gene is mutated?", [RELEASE_SENTENCE, "Nothing else is known."])
        doc.cats = {"yes": float(answer == "yes"), "no": float(answer == "no")}
        doc.spans["answers"] = [doc.char_span(*gene)]
        doc.spans[GOLD_KEY] = [next(iter(doc.sents))]
        examples.append(Example(doc, doc))
    return examples


def _train_multitask_options(step: str) -> Dict[str, List[str]]:
    """``{option: its values}`` of the line of project.yml's train-multitask that runs ``spacy-biolm
    release STEP``: how the release grows configs/release_multitask.cfg, read from the recipe."""
    import shlex

    from .project_steps import load_project

    command = next(c for c in load_project(REPO)["commands"] if c["name"] == "train-multitask")
    tokens = shlex.split(next(line for line in command["script"] if f" {step} " in line))
    options: Dict[str, List[str]] = {}
    for token, value in zip(tokens, tokens[1:]):
        if token.startswith("--") and not value.startswith("--"):
            options.setdefault(token[2:], []).append(value)
    return options


def release_multitask_config(config, corpus_dir: Path):
    """``config`` (configs/release_multitask.cfg) grown as project.yml's train-multitask grows it: the
    added entity types and relation extractor, their corpora under ``corpus_dir``."""
    from .training.entity_types_config import add_entity_types
    from .training.relations_config import add_relation_extractor

    types = _train_multitask_options("add-entity-types")
    config = add_entity_types(config, corpus_dir, types["corpus"], types["type"])
    options = {key: values[0] for key, values in _train_multitask_options("add-relation-extractor").items()}
    return add_relation_extractor(config, options["name"], options["dataset"], options["task"],
                                  Path(corpus_dir) / "relations_train.spacy", Path(corpus_dir) / "relations_dev.spacy",
                                  options["score-prefix"], float(options.get("score-weight", 0.0)))


#: (task, its config) of every pipeline the releases are assembled from: configs/release.cfg takes
#: the multi-task and QA pipelines, configs/release_per_task.cfg the per-task ones and QA; each
#: config's ``paths.<task>`` names the pipeline.
_RELEASE_TASKS = (
    ("multitask", "release_multitask.cfg"),
    ("yes_no", "yes_no.cfg"),
    ("answer_span", "answer_span.cfg"),
    ("answer_reranker", "answer_reranker.cfg"),
    ("ner", "ner.cfg"),
    ("ner_gene", "ner.cfg"),
    ("relations", "relations_anonymised.cfg"),
    ("hoc", "hoc.cfg"),
)


def make_tiny_release(out: Path, encoder_dir: Optional[Path] = None) -> Path:
    """The release pipeline as the project builds it, tiny and untrained: the multi-task pipeline
    and the QA pipelines from their configs in ``configs/`` on a tiny encoder (initialised on
    :data:`RELEASE_SENTENCE`, not trained), then ``configs/release.cfg`` assembled from them, as the
    ``assemble`` step does. Every release component is in it (``sentencizer``, ``transformer``,
    ``ner``, ``ner_gene``, ``ner_chemical``, ``ner_species``, ``ner_cell``, ``relation_extractor``,
    ``relation_chemprot``, ``hallmarks``, and the disabled ``yes_no``, ``answer_span``, ``answer_reranker``). Returns ``out / "release"``; the task pipelines are beside it
    (``out / "multitask"``, ``out / "ner"``, ...; :func:`make_tiny_per_task_release` assembles the
    per-task ones). ~15 s.
    """
    from spacy.util import fix_random_seed, load_config, load_model_from_config

    out = Path(out)
    if encoder_dir is None:
        words = list(RELATION_SENTENCES) + [RELEASE_SENTENCE.replace(".", " ."), "Which gene is mutated ?"]
        encoder_dir = make_tiny_encoder(out / "encoder", vocab_sentences=words * 20, vocab_size=150, layers=1,
                                        max_positions=256)
    fix_random_seed(0)
    for task, config_name in _RELEASE_TASKS:
        extra = {"components.relation_extractor.labels": ["ASSOCIATION"]} if task == "relations" else {}
        config = load_config(REPO / "configs" / config_name, overrides={"paths.encoder": str(encoder_dir), **extra})
        if task == "multitask":  # as project.yml's train-multitask: further entity types, ChemProt, their corpora
            config = release_multitask_config(config, out / "corpus")
        config = config.interpolate()
        nlp = load_model_from_config(config, auto_fill=True, validate=True)
        nlp.initialize(lambda nlp=nlp, task=task: _release_examples(nlp, task))
        nlp.to_disk(out / task)
    return _assemble_tasks("release.cfg", out, out / "release")


def make_tiny_per_task_release(tiny_release: Path) -> Path:
    """``configs/release_per_task.cfg`` (an encoder per task, the release before one encoder)
    assembled from :func:`make_tiny_release`'s task pipelines; returns its directory beside them."""
    out = Path(tiny_release).parent / "release_per_task"
    return out if out.is_dir() else _assemble_tasks("release_per_task.cfg", out.parent, out)


def _assemble_tasks(config_name: str, tasks_dir: Path, out: Path) -> Path:
    """``configs/CONFIG_NAME`` assembled from the task pipelines in ``tasks_dir`` that its ``paths`` name."""
    from spacy.util import load_config

    names = load_config(REPO / "configs" / config_name, interpolate=False)["paths"]
    return _assemble(config_name, {f"paths.{name}": str(Path(tasks_dir) / name) for name in names}, out)


def _assemble(config_name: str, overrides: Dict[str, str], out: Path) -> Path:
    """``spacy assemble configs/CONFIG_NAME OUT`` with ``overrides`` (its ``paths.*``), in this process."""
    from spacy.training.initialize import get_sourced_components
    from spacy.util import load_config, load_model_from_config

    config = load_config(REPO / "configs" / config_name, overrides=overrides, interpolate=False)
    nlp = load_model_from_config(config, auto_fill=True)
    sourced = get_sourced_components(config.interpolate())
    nlp._link_components()
    with nlp.select_pipes(disable=[*sourced]):
        nlp.initialize()
    nlp.to_disk(out)
    return out


def make_tiny_one_encoder_release(tiny_release: Path, out: Path, trained: Optional[Dict[str, Path]] = None) -> Path:
    """``configs/release_one_encoder.cfg`` assembled from :func:`make_tiny_release`'s pipelines
    (``tiny_release``): ``ner_gene``, ``hallmarks`` and the fast-mode ``relation_extractor`` are
    initialised (not trained) on its disease NER's transformer, frozen, as ``spacy-biolm release
    share-encoder`` configures them; ``trained`` (``{"ner_gene": DIR, ...}``) replaces any of
    those task pipelines with one trained that way. Returns ``out / "release"``."""
    from spacy.util import fix_random_seed, load_config, load_model_from_config

    from .training.shared_encoder import share_encoder

    out, source = Path(out), Path(tiny_release).parent / "ner"
    out.mkdir(parents=True, exist_ok=True)
    fix_random_seed(0)
    paths = {"ner": source, **{qa: source.parent / qa for qa in ("yes_no", "answer_span", "answer_reranker")}}
    for task, config_name, extra in [("ner_gene", "ner.cfg", {}), ("hoc", "hoc.cfg", {}),
                                     ("relations", "relations_fast.cfg", {"components.relation_extractor.labels": ["ASSOCIATION"]})]:
        if trained and task in trained:
            paths[task] = Path(trained[task])
            continue
        config = share_encoder(load_config(REPO / "configs" / config_name, overrides=extra, interpolate=False), source)
        nlp = load_model_from_config(config.interpolate(), auto_fill=True, validate=True)
        with nlp.select_pipes(disable=["transformer"]):  # the frozen, sourced encoder keeps its weights
            nlp.initialize(lambda nlp=nlp, task=task: _release_examples(nlp, task))
        nlp.to_disk(out / task)
        paths[task] = out / task
    return _assemble("release_one_encoder.cfg", {f"paths.{k}": str(v) for k, v in paths.items()}, out / "release")
