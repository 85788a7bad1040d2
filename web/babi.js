// The bAbI page (memn2n models, POST /v1/babi): a story and a question in, the answer out, and
// the memory network's attention over the story's sentences at every hop (one column per hop).
'use strict';

Explorer.pages.push({
  id: 'babi',
  title: 'bAbI',
  family: 'memn2n',
  render(root, models) {
    const {el} = Explorer;
    const picker = Explorer.modelPicker(models);
    // The first story of bAbI task 1 (Weston et al. 2015, "single supporting fact").
    const story = el('textarea', {id: 'babi-story', rows: 6, cols: 60, 'aria-label': 'story'});
    story.value = 'Mary moved to the bathroom.\nJohn went to the hallway.';
    const question = el('input', {type: 'text', id: 'babi-question', class: 'wide', value: 'Where is Mary?',
      'aria-label': 'question'});
    const go = el('button', {type: 'submit', id: 'babi-go', text: 'Answer'});
    const status = el('div', {class: 'status'});
    const answer = el('p', {class: 'answer', id: 'babi-answer'});
    const picture = el('div', {id: 'babi-picture'});

    const form = el('form', {class: 'controls stacked', onsubmit: async (ev) => {
      ev.preventDefault();
      Explorer.showError(status, null);
      go.disabled = true;
      try {
        const lines = story.value.split('\n').map((s) => s.trim()).filter((s) => s.length > 0);
        const reply = await Explorer.api('/v1/babi', {model: picker.value(), story: lines, question: question.value});
        answer.replaceChildren(
          el('span', {text: 'answer: '}), el('strong', {class: 'answer-word', text: reply.answer}),
          el('span', {class: 'score', text: ` (p = ${reply.probability.toFixed(3)})`}));
        const hops = reply.hops;  // [hop][sentence]
        const map = Explorer.heatmap({
          rowLabels: reply.story,
          colLabels: hops.map((_, k) => `hop ${k + 1}`),
          value: (s, k) => hops[k][s] || 0,
          title: (s, k, v) => `hop ${k + 1} reads "${reply.story[s]}" with weight ${v.toFixed(3)}`,
          cell: 26, cellWidth: 56, values: true,
          onCol: (k) => map.setCol(k),
          className: 'hops-map',
        });
        picture.replaceChildren(
          el('p', {class: 'hint', text: 'Each hop is one read of the memory: the question (updated ' +
            'by the previous hop\'s read) scores every sentence, and the softmax of those scores is the column. ' +
            'Hover a column to follow one hop.'}),
          map.element);
        root.dataset.state = 'done';
      } catch (err) {
        Explorer.showError(status, err);
        root.dataset.state = 'error';
      } finally {
        go.disabled = false;
      }
    }}, [
      picker.element, Explorer.field('story (one sentence a line)', story), Explorer.field('question', question), go,
    ]);
    root.append(
      el('p', {class: 'intro', text: 'An end-to-end memory network stores each sentence of the story in a ' +
        'memory slot and answers the question after several hops of attention over them.'}),
      form, status, answer, picture);
  },
});
