#!/usr/bin/env bash
# The answer-span and yes/no workflows of this project at the full profile's budgets, on one GPU,
# over seeds: the same `spacy train` and `qa evaluate` commands as project.yml's `answer-span` and
# `yes-no`, side by side instead of one after another (one GPU runs several small trainings at once).
# Run from projects/qa-transfer after `assets` and `convert` (and the root's `convert-qa`,
# `export-encoder`):  PY=python3 GPU=0 bash full_gpu.sh   (TABLES_ONLY=1: the tables from the metrics files)
#
# Budgets (updates), fixed before the run:
# - answer_span stage 1: 1,200 of answer_span.cfg's 600-token batches on SQuAD dev + COVID-QA train
#   (1.5 times the default profile's 800, half a pass: what fits one 10-minute device call beside the
#   other trainings), model-best on COVID-QA dev;
#   stage 2 and the BioASQ-only ablation: the root's full profile (qa_answer_span_steps 512, two
#   epochs of BioASQ factoid), model-last (the project's rule: 45 BioASQ dev questions).
# - yes_no stage 1: 800 updates on BoolQ (twice the default), at the root's learn rate and, as a
#   second recipe, at 3e-4 (the default run's stage 1 never beat its untrained head at 1e-4);
#   model-best on BoolQ's held-out tenth. Stage 2 and the ablation: the full profile's 96 updates
#   (3 epochs), model-best on BioASQ dev (the root's rule for yes/no).
set -euo pipefail
PY=${PY:-python}
GPU=${GPU:-0}
SEEDS=${SEEDS:-"0 1 2"}
ROOT=../..
ENCODER=$ROOT/pretrained/encoder/model
QA=$ROOT/corpus/qa
PAPER=${PAPER:-$ROOT/../shared/reference/paper_results.json}
RUN=${RUN:-full_gpu}  # the folder under metrics/, training/ and results/ this run writes
SPAN_TRANSFER_STEPS=${SPAN_TRANSFER_STEPS:-1200}
SPAN_STEPS=${SPAN_STEPS:-512}
YES_NO_TRANSFER_STEPS=${YES_NO_TRANSFER_STEPS:-800}
YES_NO_STEPS=${YES_NO_STEPS:-96}
SPAN_STAGE2_RATE=0.00005
YES_NO_STAGE2_RATE=0.00002
TRAINING=training/$RUN
METRICS=metrics/$RUN
LOGS=$METRICS/logs
mkdir -p "$TRAINING" "$LOGS" results/$RUN

# train NAME CONFIG ARGS...: one spacy train, its wall time in $METRICS/times/NAME.json, its log in $LOGS.
train() {
    local name=$1 config=$2
    shift 2
    mkdir -p "$METRICS/times"
    echo "$(date -u +%T) start $name"
    $PY -m spacy_biolm timed "$name" --results "$METRICS/times/$name.json" -- \
        $PY -m spacy train "$ROOT/configs/$config" --output "$TRAINING/$name" --gpu-id "$GPU" \
        --paths.encoder "$ENCODER" "$@" >"$LOGS/$name.log" 2>&1
    echo "$(date -u +%T) done $name"
}

# evaluate MODEL NAME DOCBIN... [-- FLAGS]: qa evaluate, one metrics file NAME_<n>.json per DocBin.
evaluate() {
    local model=$1 name=$2
    shift 2
    local docbins=() outputs=() n=0
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        docbins+=("$1"); outputs+=(-o "$METRICS/${name}_$n.json"); n=$((n + 1)); shift
    done
    [ $# -gt 0 ] && shift
    $PY -m spacy_biolm qa evaluate "$model" "${docbins[@]}" "${outputs[@]}" --gpu-id "$GPU" "$@" >"$LOGS/evaluate_$name.log" 2>&1
    echo "$(date -u +%T) scored $name"
}

SPAN_TESTS=("$QA/factoid/test_bioasq7b.spacy" "$QA/factoid/test.spacy")

# bioasq NAME CONFIG TASK CHECKPOINT SEED ARGS...: NAME trained on BioASQ's TASK set (factoid, yesno),
# stage 2 or the ablation, then its CHECKPOINT (model-last, model-best) scored on TASK's test sets.
bioasq() {
    local name=$1 config=$2 task=$3 checkpoint=$4 seed=$5
    shift 5
    local tests=("${SPAN_TESTS[@]}")
    [ "$task" = yesno ] && tests=("$QA/yesno/test.spacy")
    train "$name" "$config" "$@" --paths.train "$QA/$task/train.spacy" --paths.dev "$QA/$task/dev.spacy" --system.seed "$seed"
    evaluate "$TRAINING/$name/$checkpoint" "$name" "${tests[@]}"
}

answer_span() {
    train span_transfer answer_span.cfg --paths.train corpus/answer_span_transfer/train \
        --paths.dev corpus/answer_span_transfer/covid_qa_dev.spacy --corpora.dev.limit 0 --system.seed 0 \
        --training.max_steps $SPAN_TRANSFER_STEPS --training.eval_frequency 400
    # The baselines are scored once, on the same test Docs, beside the stage-1 model; COVID-QA test
    # (whole articles) only for it: the BioASQ-trained models answer with entities (README).
    evaluate "$TRAINING/span_transfer/model-best" span_transfer_only "${SPAN_TESTS[@]}" -- --answer-span-baselines &
    evaluate "$TRAINING/span_transfer/model-best" span_transfer_only_covid_qa corpus/covid_qa_test.spacy -- --answer-span-baselines &
    for seed in $SEEDS; do
        bioasq "span_seed$seed" answer_span.cfg factoid model-last "$seed" --paths.init "$TRAINING/span_transfer/model-best" \
            --training.optimizer.learn_rate.initial_rate $SPAN_STAGE2_RATE --training.max_steps $SPAN_STEPS --training.eval_frequency 256 &
    done
    wait
}

# yes_no RECIPE RATE: stage 1 on BoolQ at RATE, then BioASQ over seeds from its model-best.
yes_no() {
    local recipe=$1 rate=$2
    train "yes_no_transfer_$recipe" yes_no.cfg --paths.train corpus/yes_no_transfer/train.spacy \
        --paths.dev corpus/yes_no_transfer/dev.spacy --system.seed 0 \
        --training.optimizer.learn_rate.initial_rate "$rate" \
        --training.max_steps $YES_NO_TRANSFER_STEPS --training.eval_frequency 100
    evaluate "$TRAINING/yes_no_transfer_$recipe/model-best" "yes_no_transfer_only_$recipe" "$QA/yesno/test.spacy" \
        -- --yes-no-majority "$QA/yesno/train.spacy" &
    for seed in $SEEDS; do
        bioasq "yes_no_${recipe}_seed$seed" yes_no.cfg yesno model-best "$seed" --paths.init "$TRAINING/yes_no_transfer_$recipe/model-best" \
            --training.optimizer.learn_rate.initial_rate $YES_NO_STAGE2_RATE --training.max_steps $YES_NO_STEPS --training.eval_frequency 32 &
    done
    wait
}

if [ "${TABLES_ONLY:-0}" != 1 ]; then
    answer_span &
    yes_no root 0.0001 &
    yes_no lr3e-4 0.0003 &
    for seed in $SEEDS; do
        bioasq "span_bioasq_only_seed$seed" answer_span.cfg factoid model-last "$seed" \
            --training.max_steps $SPAN_STEPS --training.eval_frequency 256 &
        bioasq "yes_no_bioasq_only_seed$seed" yes_no.cfg yesno model-best "$seed" \
            --training.max_steps $YES_NO_STEPS --training.eval_frequency 32 &
    done
    wait
    echo "$(date -u +%T) all trainings done"
fi

# One table per test set; the majority and most-frequent-word baselines come from the stage-1 rows' files.
tables() {
    $PY -m spacy_biolm qa seeds-table results/$RUN/answer_span_bioasq7b.md answer_span_bioasq7b --paper "$PAPER" \
        "SQuAD + COVID-QA ($SPAN_TRANSFER_STEPS updates), then BioASQ ($SPAN_STEPS)=$METRICS/span_seed?_0.json" \
        "BioASQ only ($SPAN_STEPS updates, ablation)=$METRICS/span_bioasq_only_seed?_0.json" \
        "SQuAD + COVID-QA only=$METRICS/span_transfer_only_0.json"
    $PY -m spacy_biolm qa seeds-table results/$RUN/answer_span_dev_json.md answer_span --paper "$PAPER" \
        "SQuAD + COVID-QA ($SPAN_TRANSFER_STEPS updates), then BioASQ ($SPAN_STEPS)=$METRICS/span_seed?_1.json" \
        "BioASQ only ($SPAN_STEPS updates, ablation)=$METRICS/span_bioasq_only_seed?_1.json" \
        "SQuAD + COVID-QA only=$METRICS/span_transfer_only_1.json"
    $PY -m spacy_biolm qa seeds-table results/$RUN/yes_no.md yes_no --paper "$PAPER" \
        "BoolQ at 1e-4 ($YES_NO_TRANSFER_STEPS updates), then BioASQ ($YES_NO_STEPS)=$METRICS/yes_no_root_seed?_0.json" \
        "BoolQ at 3e-4 ($YES_NO_TRANSFER_STEPS updates), then BioASQ ($YES_NO_STEPS)=$METRICS/yes_no_lr3e-4_seed?_0.json" \
        "BioASQ only ($YES_NO_STEPS updates, ablation)=$METRICS/yes_no_bioasq_only_seed?_0.json" \
        "BoolQ at 1e-4 only=$METRICS/yes_no_transfer_only_root_0.json" \
        "BoolQ at 3e-4 only=$METRICS/yes_no_transfer_only_lr3e-4_0.json"
    $PY -m spacy_biolm qa seeds-table results/$RUN/answer_span_covid_qa.md answer_span_covid_qa \
        "SQuAD + COVID-QA only ($SPAN_TRANSFER_STEPS updates)=$METRICS/span_transfer_only_covid_qa_0.json"
}
tables
