"""BERT-large pre-training step as NVIDIA DeepLearningExamples runs it
(PyTorch/LanguageModeling/BERT): transformers' BertModel at BERT-large size
(24 layers, hidden 1024, 16 heads, FFN 4096, vocabulary padded to 30528 as
DLE does), eager attention (no fused SDPA: DLE's 21.11 model writes it out),
dropout 0.1, and DLE's heads: the masked-LM head runs on the masked positions
only (DLE's dense_seq_output: max_predictions_per_seq = 20 at seq 128, 80 at
seq 512), tied to the word embedding, plus next-sentence prediction.
Random init; under graphlint-export nothing is allocated. Example inputs:
batch 3, seq 11, 5 masked positions (odd sizes, so -D batch=3 -D seq=11
-D pred=5 turn them into symbols to rescale)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel

BATCH, SEQ, PRED = 3, 11, 5


class BertPretrain(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = BertConfig(vocab_size=30528, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                         intermediate_size=4096, max_position_embeddings=512, attn_implementation="eager")
        self.bert = BertModel(cfg)
        self.transform = nn.Linear(1024, 1024)
        self.transform_ln = nn.LayerNorm(1024, eps=1e-12)
        self.decoder_bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        self.nsp = nn.Linear(1024, 2)

    def forward(self, input_ids, token_type_ids, attention_mask, masked_positions, masked_labels, nsp_labels):
        out = self.bert(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
        seq, pooled = out.last_hidden_state, out.pooler_output
        b, p = masked_positions.shape
        idx = masked_positions.unsqueeze(-1).expand(b, p, seq.size(-1))
        picked = torch.gather(seq, 1, idx)  # [b, p, h]: DLE's dense_seq_output
        h = self.transform_ln(F.gelu(self.transform(picked)))
        logits = h @ self.bert.embeddings.word_embeddings.weight.t() + self.decoder_bias
        mlm = F.cross_entropy(logits.reshape(-1, logits.size(-1)), masked_labels.reshape(-1))
        return mlm + F.cross_entropy(self.nsp(pooled), nsp_labels)


def model():
    return BertPretrain()


def example_inputs():
    ids = torch.randint(0, 30528, (BATCH, SEQ))
    return (ids, torch.zeros_like(ids), torch.ones_like(ids), torch.randint(0, SEQ, (BATCH, PRED)),
            torch.randint(0, 30528, (BATCH, PRED)), torch.randint(0, 2, (BATCH,)))
