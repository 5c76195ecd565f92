#!/usr/bin/env python3
"""Writes catalog/model/word-classes.tsv: each one-word English verb and noun of WordNet 3.0 with
the lexical class ("lexicographer file") of its most frequent sense, e.g. `factor  cognition
cognition`, `refund  possession  possession`. The learned model reads these classes as features
of the words it has never seen in training (see src/classify/model/classes.rs), so a tool named
`integrate_expression` borrows what the corpus taught about other verbs of the same class.

Source: Debian's package wordnet-base 1:3.0-37 (WordNet 3.0, Princeton University; its
licence allows use, copying and distribution with the copyright notice, kept in the table's
header). Usage: scripts/word-classes.py [WORDNET_DIR] > catalog/model/word-classes.tsv
"""
import re, sys

DIR = sys.argv[1] if len(sys.argv) > 1 else '/usr/share/wordnet'
# lexnames(5): the lexicographer files by number.
LEXNAMES = ("adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact "
            "noun.attribute noun.body noun.cognition noun.communication noun.event noun.feeling "
            "noun.food noun.group noun.location noun.motive noun.object noun.person "
            "noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation "
            "noun.shape noun.state noun.substance noun.time verb.body verb.change verb.cognition "
            "verb.communication verb.competition verb.consumption verb.contact verb.creation "
            "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative "
            "verb.weather adj.ppl").split()
WORD = re.compile(r'^[a-z]{3,20}$')


def classes(pos):
    """lemma -> lexical class of its first (most frequent) sense, for one part of speech."""
    data = open(f'{DIR}/data.{pos}', 'rb').read()
    out = {}
    for line in open(f'{DIR}/index.{pos}', encoding='latin-1'):
        if line.startswith(' '):
            continue
        f = line.split()
        lemma = f[0]
        if not WORD.match(lemma):
            continue
        p_cnt = int(f[3])
        first = int(f[4 + p_cnt + 2])  # lemma pos synset_cnt p_cnt [ptrs] sense_cnt tagsense_cnt offsets
        rec = data[first:first + 40].split()
        out[lemma] = LEXNAMES[int(rec[1])].split('.')[1]
    return out


verbs, nouns = classes('verb'), classes('noun')
print('# word\tverb class\tnoun class: the lexicographer file of the most frequent sense.')
print('# Made by scripts/word-classes.py from WordNet 3.0 (Debian wordnet-base 1:3.0-37).')
print('# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Permission to')
print('# use, copy, modify and distribute this software and database and its documentation for')
print('# any purpose and without fee or royalty is hereby granted, provided that you agree to')
print('# comply with the copyright notice and statements, including the disclaimer, of the')
print('# WordNet 3.0 licence. THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON')
print('# UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED.')
for w in sorted(set(verbs) | set(nouns)):
    print(f"{w}\t{verbs.get(w, '-')}\t{nouns.get(w, '-')}")
