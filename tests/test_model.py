"""Vocabularies, corpus encoding, the BiLSTM encoder and the MLP scorer."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.config import TAG_INPUTS, ModelConfig, preset_model_config
from neuralparse.errors import InputError
from neuralparse.model import (
    PAD_INDEX,
    UNK_INDEX,
    EncodedCorpus,
    ParserModel,
    Vocabularies,
    Vocabulary,
    build_vocabularies,
    mask_illegal,
    normalize_form,
)
from neuralparse.model.dropout import Dropout
from neuralparse.model.encoder import BiLSTM, CharBiLSTM
from neuralparse.model.vocab import vocabularies_for
from neuralparse.training.examples import pack_mask, unpack_mask
from tests.parser_fixtures import make_corpus

SMALL = ModelConfig(
    word_dim=16, char_dim=8, char_out=12, upos_dim=6, xpos_dim=6, feats_dim=6,
    lstm_layers=2, lstm_hidden=10, mlp_hidden=14, dropout=0.0, word_dropout=0.0,
)  # fmt: skip


def test_vocabulary_unknown_and_min_count() -> None:
    vocab = Vocabulary.build(["a", "b", "a", "c", "a", "b"], min_count=2)
    assert vocab.symbols[:2] == ["<pad>", "<unk>"]
    assert vocab.symbols[2:] == ["a", "b"]  # most frequent first, "c" too rare
    assert vocab.counts[2:] == [3, 2]
    assert vocab.lookup("a") == 2
    assert vocab.lookup("c") == UNK_INDEX
    assert vocab.encode(["b", "zzz"]) == [3, UNK_INDEX]
    assert Vocabulary.from_dict(vocab.to_dict()) == vocab


def test_vocabularies_skip_absent_columns_and_round_trip() -> None:
    corpus = make_corpus(5)
    for sentence in corpus:
        sentence.xpos[:] = ["_"] * len(sentence)
    vocabs = build_vocabularies(corpus, min_word_count=1, use_feats=False)
    assert vocabs.xpos is None  # the column is empty in the data
    assert vocabs.feats is None  # disabled
    assert vocabs.upos is not None and vocabs.chars is not None
    assert Vocabularies.from_dict(vocabs.to_dict()) == vocabs


def test_normalized_forms_share_digits_and_case() -> None:
    assert normalize_form("Year1999") == normalize_form("year2001") == "year0000"


def test_encoded_corpus_batch_matches_sentences() -> None:
    corpus = make_corpus(6)
    vocabs = build_vocabularies(corpus, min_word_count=1)
    encoded = EncodedCorpus.build(corpus, vocabs)
    ids = torch.tensor([4, 1, 3])
    batch = encoded.batch(ids)
    assert batch.lengths.tolist() == [len(corpus[i]) for i in ids.tolist()]
    for row, i in enumerate(ids.tolist()):
        n = len(corpus[i])
        words = [vocabs.words.lookup(normalize_form(f)) for f in corpus[i].forms]
        assert batch.words[row, :n].tolist() == words
        assert (batch.words[row, n:] == PAD_INDEX).all()
        assert batch.upos[row, :n].tolist() == vocabs.upos.encode(corpus[i].upos)
        # The character rows of each word spell the word.
        for t, form in enumerate(corpus[i].forms):
            chars = batch.chars[batch.form_ids[row, t]].tolist()
            assert chars[: len(form)] == vocabs.chars.encode(list(form))


def _model(
    n_actions: int = 7, config: ModelConfig = SMALL, seed: int = 3
) -> tuple[ParserModel, EncodedCorpus]:
    corpus = make_corpus(8, seed=seed)
    vocabs = vocabularies_for(corpus, dataclasses.replace(config, min_word_count=1))
    torch.manual_seed(0)
    model = ParserModel(vocabs, config, n_features=4, n_actions=n_actions)
    return model.eval(), EncodedCorpus.build(corpus, vocabs)


@pytest.mark.parametrize(
    ("tag_input", "char_model"),
    [(tag_input, "cnn") for tag_input in TAG_INPUTS] + [("none", "bilstm"), ("gold", "bilstm")],
)
def test_encoder_shapes_and_padding_invariance(tag_input: str, char_model: str) -> None:
    config = dataclasses.replace(SMALL, tag_input=tag_input, char_model=char_model)
    model, encoded = _model(config=config)
    ids = torch.arange(len(encoded))
    batch = encoded.batch(ids)
    out, tag_scores = model.encoder(batch)
    width = int(encoded.lengths.max()) + 1
    assert out.shape == (len(ids), width, 2 * SMALL.lstm_hidden)
    if tag_input == "gold":
        assert tag_scores == {} and model.tagged_columns == ()
    else:  # the generated corpus has UPOS and FEATS, no XPOS
        assert model.tagged_columns == ("upos", "feats")
        for column, scores in tag_scores.items():
            assert scores.shape == (len(ids), width, model.encoder.taggers[column].out_features)
    # A sentence encodes the same alone as inside a padded batch (packed sequences).
    for i in ids.tolist():
        alone, alone_tags = model.encoder(encoded.batch(torch.tensor([i])))
        n = int(encoded.lengths[i]) + 1
        torch.testing.assert_close(alone[0, :n], out[i, :n], atol=1e-5, rtol=1e-4)
        for column, scores in alone_tags.items():
            torch.testing.assert_close(
                scores[0, :n], tag_scores[column][i, :n], atol=1e-5, rtol=1e-4
            )


@pytest.mark.parametrize("char_model", ["cnn", "bilstm"])
def test_character_vectors_computed_once_per_corpus_give_the_same_encoding(
    char_model: str,
) -> None:
    """Batches that carry the corpus's character vectors (prediction computes them once per
    chunk) encode exactly as batches that carry their own forms' characters."""
    model, encoded = _model(config=dataclasses.replace(SMALL, char_model=char_model))
    with torch.inference_mode():
        vectors = model.char_vectors(encoded, torch.device("cpu"))
        assert vectors is not None and vectors.shape == (len(encoded.char_table), SMALL.char_out)
        for ids in (torch.tensor([0, 3, 5]), torch.tensor([7, 1]), torch.arange(len(encoded))):
            own, given = encoded.batch(ids), encoded.batch(ids, vectors)
            assert given.chars is None and own.chars is not None
            torch.testing.assert_close(model.encoder(given)[0], model.encoder(own)[0])
    without_chars = dataclasses.replace(SMALL, use_chars=False)
    model, encoded = _model(config=without_chars)
    assert model.char_vectors(encoded, torch.device("cpu")) is None


@pytest.mark.parametrize("tag_input", TAG_INPUTS)
def test_only_the_gold_tag_model_reads_the_input_tags(tag_input: str) -> None:
    model, encoded = _model(config=dataclasses.replace(SMALL, tag_input=tag_input))
    batch = encoded.batch(torch.arange(len(encoded)))
    before, before_tags = model.encoder(batch)
    # The input's tags blanked, as in text that nobody tagged.
    batch.upos = torch.where(batch.upos != PAD_INDEX, UNK_INDEX, PAD_INDEX)
    for name in ("feats", "feats_classes"):
        values = getattr(batch, name)
        if values is not None:
            setattr(batch, name, torch.where(values != PAD_INDEX, UNK_INDEX, PAD_INDEX))
    after, after_tags = model.encoder(batch)
    if tag_input == "gold":
        assert not torch.allclose(before, after)
    else:
        torch.testing.assert_close(before, after)
        for column in before_tags:
            torch.testing.assert_close(before_tags[column], after_tags[column])


def test_predicted_tags_mix_in_gold_tags_in_training_only() -> None:
    config = dataclasses.replace(SMALL, tag_input="predicted", gold_tag_rate=1.0)
    model, encoded = _model(config=config)
    batch = encoded.batch(torch.arange(len(encoded)))
    scrambled = dataclasses.replace(batch, upos=torch.where(batch.upos > 1, 2, batch.upos))
    model.train()  # dropout 0: training differs from evaluation only by the gold tags
    torch.testing.assert_close(model.encoder(batch)[1]["upos"], model.encoder(scrambled)[1]["upos"])
    assert not torch.allclose(model.encoder(batch)[0], model.encoder(scrambled)[0])
    model.eval()
    torch.testing.assert_close(model.encoder(batch)[0], model.encoder(scrambled)[0])


def test_best_tags_never_predict_padding_or_unknown() -> None:
    model, encoded = _model()
    _, tag_scores = model.encode_and_tag(encoded.batch(torch.arange(3)))
    tag_scores["upos"][..., :2] = 1e9  # padding and unknown score highest
    assert (model.best_tags(tag_scores)["upos"] >= 2).all()


@pytest.mark.parametrize(
    ("preset", "changed"),
    [
        ("gold_tags", {"tag_input"}),
        ("glove_en", {"pretrained_vectors"}),
        ("contextual_en", {"contextual", "contextual_layers"}),
        ("rich_morphology", {"char_out", "feats_head"}),
    ],
)
def test_model_presets_are_the_default_with_their_own_settings_changed(
    preset: str, changed: set[str]
) -> None:
    # A preset measured as "the default plus X" must follow the default when it changes.
    default = dataclasses.asdict(preset_model_config("default"))
    settings = dataclasses.asdict(preset_model_config(preset))
    assert {key for key in default if settings[key] != default[key]} == changed


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tag_input": "silver"}, "tag_input"),
        ({"tag_input": "soft", "tagger_layer": 2}, "below the top layer"),
        ({"tagger_layer": 3}, "not a layer"),
        ({"gold_tag_rate": 1.5}, "probability"),
        ({"upos_loss_weight": -1.0}, "negative"),
        ({"char_model": "lstm"}, "char_model"),
    ],
)
def test_bad_tagger_configurations_are_refused(changes: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        dataclasses.replace(SMALL, **changes)


def test_character_bilstm_reads_each_word_alone() -> None:
    """Padding after a word (other words of the batch are longer) changes nothing, and the
    vector depends on the first and the last characters."""
    torch.manual_seed(0)
    chars = CharBiLSTM(n_chars=12, char_dim=5, out_dim=8)
    words = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 0, 0, 0], [3, 4, 5, 9, 9], [2, 4, 5, 0, 0]])
    together = chars(words)
    assert together.shape == (4, 8)
    torch.testing.assert_close(chars(words[1:2, :2])[0], together[1])
    torch.testing.assert_close(chars(words[:1, :3])[0], together[0])
    assert not torch.allclose(together[0], together[2])  # longer word
    assert not torch.allclose(together[0], together[3])  # other first character
    with pytest.raises(ValueError, match="even"):
        CharBiLSTM(n_chars=12, char_dim=5, out_dim=7)


def test_character_bilstm_groups_by_length_keep_every_row() -> None:
    """Forms of many lengths in shuffled order (more forms than length groups, and fewer): each
    row is the vector of its own form computed alone, and gradients reach the embeddings."""
    torch.manual_seed(0)
    chars = CharBiLSTM(n_chars=12, char_dim=5, out_dim=8)
    lengths = torch.randint(1, 10, (23,))
    words = torch.randint(2, 12, (23, 10)) * (torch.arange(10)[None, :] < lengths[:, None])
    for batch in (words, words[:3], words[:0]):
        together = chars(batch)
        assert together.shape == (len(batch), 8)
        for row, word in enumerate(batch):
            alone = chars(word[None, : int((word != 0).sum())])[0]
            torch.testing.assert_close(together[row], alone)
    # A GPU runs every form at once, at the table's width: the same vectors.
    at_once = chars._end_states(words, (words != 0).sum(1).clamp(min=1))
    torch.testing.assert_close(at_once, chars(words))
    chars(words).sum().backward()
    assert chars.embed.weight.grad is not None and chars.embed.weight.grad.abs().sum() > 0


def test_sentence_bilstm_groups_by_length_keep_every_row() -> None:
    """Without gradients, sentences of many lengths in shuffled order (more sentences than
    length groups, and fewer), two layers: every word's vector is the one the whole padded
    batch gives at once (what training and a GPU run): bit for bit on the AVX512 machine
    this was written on, within float32 rounding on a 2-core CPU without AVX512 (3e-8, the
    LSTM kernel rounding by batch size); a misplaced row or a padding read differs by far
    more."""
    torch.manual_seed(0)
    lstm = BiLSTM(input_dim=6, hidden=5, layers=2, dropout=0.0)
    lengths = torch.randint(1, 12, (19,))
    inputs = torch.randn(19, 12, 6)
    for rows in (slice(None), slice(0, 3)):
        with torch.inference_mode():
            grouped = lstm(inputs[rows], lengths[rows])
        at_once = lstm(inputs[rows], lengths[rows])
        assert grouped.shape == at_once.shape == (len(lengths[rows]), 12, 10)
        words = torch.arange(12)[None, :] < lengths[rows][:, None]
        torch.testing.assert_close(grouped[words], at_once[words], atol=1e-6, rtol=1e-5)


def test_character_gradients_are_the_same_every_time_on_two_threads() -> None:
    """Training on two CPU threads is reproducible: the words' character vectors are looked
    up, and the lookup's backward adds the gradients of a form's words in a fixed order
    (indexing's backward did not, and two runs of one seed parted after an epoch)."""
    config = dataclasses.replace(SMALL, char_model="bilstm", char_out=128)
    corpus = make_corpus(150, seed=5, min_words=6, max_words=14)  # forms recur
    vocabs = vocabularies_for(corpus, dataclasses.replace(config, min_word_count=1))
    torch.manual_seed(0)
    model = ParserModel(vocabs, config, n_features=4, n_actions=7).train()
    batch = EncodedCorpus.build(corpus, vocabs).batch(torch.arange(len(corpus)))
    # A different gradient at every word: equal ones would sum alike in any order.
    weights = torch.randn(*batch.form_ids.shape, config.char_out)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        gradients = []
        for _ in range(4):
            model.zero_grad(set_to_none=True)
            vectors = model.encoder.word_vectors(batch)[..., -config.char_out :]
            (vectors * weights).square().sum().backward()
            gradients.append([p.grad.clone() for p in model.encoder.chars.parameters()])
    finally:
        torch.set_num_threads(threads)
    for repeated in gradients[1:]:
        for first, again in zip(gradients[0], repeated, strict=True):
            assert torch.equal(first, again)


@pytest.mark.parametrize("char_model", ["cnn", "bilstm"])
def test_unknown_words_still_get_character_vectors(char_model: str) -> None:
    model, encoded = _model(config=dataclasses.replace(SMALL, char_model=char_model))
    batch = encoded.batch(torch.tensor([0]))
    batch.words[:] = torch.where(batch.words != PAD_INDEX, UNK_INDEX, PAD_INDEX)
    vectors = model.encoder.word_vectors(batch)[0]
    # All words are unknown, but different forms get different input vectors.
    forms = encoded.batch(torch.tensor([0])).form_ids[0]
    distinct = {int(f) for f in forms}
    assert len({tuple(v.tolist()) for v in vectors}) == len(distinct)


def test_scorer_shapes_and_null_features() -> None:
    model, encoded = _model(n_actions=9)
    batch = encoded.batch(torch.tensor([0, 1]))
    table = model.encode(batch)
    assert table.rows.shape == (2 * table.width + 1, 4, SMALL.mlp_hidden)
    sentence = torch.tensor([0, 1, 1])
    tokens = torch.tensor([[0, 1, -1, 2], [-1, -1, -1, -1], [3, 2, 1, 0]])
    scores = model.score(table, sentence, tokens)
    assert scores.shape == (3, 9)
    # Null features read the null row: the same for every sentence.
    other = model.score(table, torch.tensor([0]), tokens[1:2])
    torch.testing.assert_close(other, scores[1:2])


@given(st.integers(1, 6), st.integers(1, 40), st.randoms(use_true_random=False))
def test_masking_keeps_legal_argmax_and_finite_rows(rows, actions, rnd) -> None:
    generator = torch.Generator().manual_seed(rnd.randrange(2**31))
    scores = torch.randn((rows, actions), generator=generator)
    legal = torch.rand((rows, actions), generator=generator) < 0.4
    legal[0] = False  # a terminal configuration: no legal action
    masked = mask_illegal(scores, legal)
    best = masked.argmax(1)
    for r in range(1, rows):
        if legal[r].any():
            assert legal[r, best[r]]
    assert torch.isfinite(torch.log_softmax(masked[0], 0)).all()


@given(st.lists(st.lists(st.booleans(), min_size=13, max_size=13), min_size=1, max_size=9))
def test_mask_packing_round_trips(rows) -> None:
    mask = torch.tensor(rows)
    packed = pack_mask(mask)
    assert packed.shape == (len(rows), 2) and packed.dtype == torch.uint8
    assert torch.equal(unpack_mask(packed, 13), mask)


def test_summary_features_enter_the_scores() -> None:
    from neuralparse.model.parser import summary_feature_size
    from neuralparse.systems import get_system

    three_step = get_system("three_step", ["root", "nsubj"])
    assert summary_feature_size(three_step) == len(three_step.labels)
    assert summary_feature_size(get_system("arc_eager", ["root", "nsubj"])) == 0
    corpus = make_corpus(4, seed=1)
    vocabs = build_vocabularies(corpus, min_word_count=1)
    torch.manual_seed(0)
    model = ParserModel(vocabs, SMALL, n_features=3, n_actions=5, n_summary=2).eval()
    table = model.encode(EncodedCorpus.build(corpus, vocabs).batch(torch.tensor([0])))
    tokens = torch.tensor([[0, 1, -1], [0, 1, -1]])
    summary = torch.tensor([[0.0, 0.0], [1.0, 0.0]])
    scores = model.score(table, torch.tensor([0, 0]), tokens, summary)
    assert not torch.allclose(scores[0], scores[1])  # same tokens, different summaries
    try:
        model.score(table, torch.tensor([0]), tokens[:1])
    except ValueError as error:
        assert "summary" in str(error)
    else:
        raise AssertionError("a missing summary must be refused")


@pytest.mark.parametrize("p", [0.0, 0.1, 0.33, 0.5, 0.9, 1.0])
def test_cpu_dropout_drops_with_probability_p_and_keeps_the_mean(p: float) -> None:
    torch.manual_seed(0)
    layer = Dropout(p).train()
    inputs = torch.ones(400, 250)
    outputs = layer(inputs)
    dropped = (outputs == 0).float().mean().item()
    assert dropped == pytest.approx(p, abs=0.005)
    kept = outputs[outputs != 0]
    if p < 1.0:
        assert torch.allclose(kept, torch.full_like(kept, 1 / (1 - p)), rtol=1e-4)
        assert outputs.mean().item() == pytest.approx(1.0, abs=0.02)
    # Every 16-bit number of a 64-bit draw is used: no block of positions is biased.
    per_column = (outputs.reshape(-1, 4) == 0).float().mean(0)
    assert torch.allclose(per_column, torch.full_like(per_column, p), atol=0.01)


def test_cpu_dropout_is_seeded_is_the_identity_in_eval_and_passes_gradients() -> None:
    layer = Dropout(0.33)
    inputs = torch.randn(7, 9, 13, requires_grad=True)
    torch.manual_seed(5)
    first = layer(inputs)
    torch.manual_seed(5)
    assert torch.equal(first, layer(inputs))
    assert not torch.equal(first, layer(inputs))
    first.sum().backward()
    kept = (first != 0).float()
    assert torch.allclose(inputs.grad, kept / (1 - 0.33), rtol=1e-4)
    layer.eval()
    assert layer(inputs) is inputs
    assert Dropout(0.5).state_dict() == {} and isinstance(layer, torch.nn.Dropout)
