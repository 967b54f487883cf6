"""Mechanism files: load/save round trips in Python, with files the labeldp program writes, and
Python's files read by the program (audit, privatize --mechanism); the committed corpus."""

import json
import pickle

import numpy as np
import pytest

import labeldp
from conftest import REPO

VALUES = [0.0, 1.0, 2.0, 5.0]
PROBS = [0.4, 0.3, 0.2, 0.1]


def all_kinds():
    return [
        labeldp.rr_on_bins(VALUES, PROBS, 1.0),
        labeldp.optimal(VALUES, PROBS, 1.0, [0, 1, 2, 5]),
        labeldp.unbiased(VALUES, PROBS, 1.0, grid=8),
        labeldp.interval([0, 1, 2], [1, 2, 4], [0.2, 0.5, 0.3], 1.0, 0.5),
        labeldp.baseline("laplace", 1.0, 0, 8),
        labeldp.baseline("discrete-gaussian", 1.0, 0, 8, 1e-5, 0.5),
        labeldp.baseline("rr", 1.0, 0, 8, values=VALUES, probs=PROBS),
    ]


def test_save_load_loads_pickle_round_trip(tmp_path):
    for i, m in enumerate(all_kinds()):
        path = tmp_path / f"m{i}.json"
        m.save(str(path))
        assert path.read_text() == m.to_json() + "\n"
        for back in (labeldp.load(str(path)), labeldp.loads(m.to_json()), pickle.loads(pickle.dumps(m))):
            assert back.to_json() == m.to_json()
            assert (back.kind, back.eps, back.delta, back.expected_loss) == (m.kind, m.eps, m.delta, m.expected_loss)
            assert back.audit() == m.audit()
            # Same key and ids, same noise: the loaded mechanism applies exactly as the original.
            key, labels = bytes(range(32)), np.linspace(-1, 9, 101)
            ids = np.arange(101, dtype=np.uint64)
            assert np.array_equal(back.privatize(labels, key=key, ids=ids), m.privatize(labels, key=key, ids=ids))


def test_cli_files_load_and_audit_as_the_cli_says(tmp_path, cli):
    prior = tmp_path / "prior.csv"
    prior.write_text("value,prob\n0,0.4\n1,0.3\n2,0.2\n5,0.1\n")
    path = tmp_path / "bins.json"
    path.write_text(cli("bins", "--prior", prior, "--eps", 0.5, "--json").stdout)
    m = labeldp.load(str(path))
    assert m.kind == "rr-on-bins" and m.eps == 0.5
    audit = json.loads(cli("audit", "--mechanism", path, "--json").stdout)
    assert m.audit() == audit["epsilon"]
    assert m.to_json() == labeldp.rr_on_bins(VALUES, PROBS, 0.5).to_json()


def test_python_files_are_read_by_the_cli(tmp_path, cli):
    labels = tmp_path / "labels.csv"
    labels.write_text("y\n" + "".join(f"{v}\n" for v in [0, 1, 2, 5, 3.3, -4, 12] * 10))
    for i, m in enumerate(all_kinds()):
        path = tmp_path / f"m{i}.json"
        m.save(str(path))
        audit = json.loads(cli("audit", "--mechanism", path, "--json").stdout)
        assert audit["epsilon"] == pytest.approx(m.audit(), abs=1e-12)
        out = cli("privatize", "--mechanism", path, "--input", labels, "--column", "y", "--seed", 7).stdout
        rows = out.strip().splitlines()
        assert rows[0] == "y" and len(rows) == 71
        noisy = np.array([float(r) for r in rows[1:]])
        if m.is_finite:  # every noisy label is one of the file's outputs
            assert np.isin(noisy, m.outputs).all()


def test_committed_corpus_files(tmp_path):
    corpus = REPO / "tests" / "fuzz" / "corpus" / "mechanism_json"
    good = ["optimal.json", "finite.json", "gaussian.json", "rr-with-prior.json", "staircase.json"]
    for name in good:
        path = corpus / name
        if not path.exists():
            pytest.skip(f"{path} is not in this checkout")
        m = labeldp.load(str(path))
        assert m.eps > 0 and m.audit() <= m.eps
    for name in ["duplicate_key.json"]:
        with pytest.raises(ValueError):
            labeldp.load(str(corpus / name))
