#!/usr/bin/python3
"""Writes a real torch.save checkpoint of a small transformer after a few Adam steps.

Run with Debian's python3 (apt python3-torch). Deterministic (fixed seed). The model follows
../shared/notes/machine-limits.md data set h: vocab 8192, d=512, 6 encoder layers (27 M
parameters); writes model+optimizer (float32, ~330 MB) and the state_dict cast to bf16.

usage: bench/torch_checkpoint.py OUT_DIR
"""
import os
import sys

import torch


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1234)
    vocab, d = 8192, 512
    emb = torch.nn.Embedding(vocab, d)
    layer = torch.nn.TransformerEncoderLayer(d_model=d, nhead=8, dim_feedforward=2048,
                                             batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, num_layers=6)
    head = torch.nn.Linear(d, vocab)
    model = torch.nn.ModuleDict({"emb": emb, "enc": enc, "head": head})
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    for step in range(5):
        tokens = torch.randint(0, vocab, (8, 64))
        logits = head(enc(emb(tokens)))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), tokens.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 5},
               os.path.join(out, "checkpoint.pt"))
    torch.save({k: v.to(torch.bfloat16) for k, v in model.state_dict().items()},
               os.path.join(out, "model.bf16.pt"))


if __name__ == "__main__":
    main()
