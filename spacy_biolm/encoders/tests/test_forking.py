"""nlp.pipe(n_process=2) after a multi-threaded torch run: workers do not hang and find the
entities of n_process=1."""

import subprocess
import sys

from spacy_biolm.testing import REPO

SCRIPT = """
import multiprocessing, os, sys
os.environ["TOKENIZERS_PARALLELISM"] = "false"
import spacy, torch
from spacy.training import Example

torch.set_num_threads(2)
config = spacy.util.load_config({cfg!r}, overrides={{"paths.encoder": {encoder!r}}}, interpolate=True)
nlp = spacy.util.load_model_from_config(config, auto_fill=True)  # registers the fork hook
gold = nlp.make_doc("Germline mutations in BRCA1 cause hereditary breast cancer .")
gold.ents = [gold.char_span(34, 58, label="Disease")]
nlp.initialize(lambda: [Example(nlp.make_doc(gold.text), gold)])
torch.ones(20_000_000).sum()  # a parallel region: the parent's OpenMP pool now exists

def child_threads(queue):
    torch.ones(20_000_000).sum()  # would wait forever for the parent's pool threads
    queue.put(torch.get_num_threads())

queue = multiprocessing.get_context("fork").Queue()
worker = multiprocessing.get_context("fork").Process(target=child_threads, args=(queue,), daemon=True)
worker.start()
worker.join(60)
print("child threads", queue.get(timeout=5))  # raises (and the daemon worker dies) on a hang
texts = ["BRCA1 is a gene .", "Which drug treats cancer ?", "TP53 ."] * 8
one = [[(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe(texts)]
two = [[(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe(texts, n_process=2, batch_size=4)]
print("same", one == two, len(two) == len(texts))
"""


def test_n_process_workers_run_single_threaded_and_agree(tiny_qa_encoder):
    code = SCRIPT.format(cfg=str(REPO / "configs" / "ner.cfg"), encoder=str(tiny_qa_encoder))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "child threads 1" in result.stdout
    assert "same True True" in result.stdout
