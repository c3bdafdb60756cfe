import spacy, xlnel.spacy_component  # noqa: E401,F401  (the import registers "xlnel_linker")
en, he = spacy.blank("en"), spacy.blank("he")
en.add_pipe("xlnel_linker", config={"pipeline": "default"}); he.add_pipe("xlnel_linker", config={"pipeline": "runs/diabetes-cui"})  # noqa: E501,E702
docs = [en("The patient had seizures, hypertension and type 2 diabetes."), he("אני חולה סוכרת סוג 2 ומזריק אינסולין פעמיים ביום, ויש לי גם לחץ דם גבוה.")]  # noqa: E501
print(*[(e.text, e.kb_id_, e.label_, e._.xlnel["concept_name"], e._.xlnel["score"]) for d in docs for e in d.ents], sep="\n"); html = spacy.displacy.render(docs, style="ent", page=True)  # noqa: E501,E702
