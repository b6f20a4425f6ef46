// The alternatives of the latest turn on the Play page (GET …/turns/:turnId/alternatives): each
// one's opening words, the one in the story marked, the others a Select away.
import { h } from 'preact';
import htm from 'htm';

const html = htm.bind(h);

export function PlayAlternatives({ alternatives, onSelect, locked }) {
  if (!alternatives || alternatives.list.length < 2) return null;
  const { list } = alternatives;
  return html`<section class="play-alternatives" data-testid="play-alternatives" aria-labelledby="alternatives-title">
    <h3 id="alternatives-title">Alternatives of the last turn (${list.length})</h3>
    <ol>
      ${list.map(
        (alt, i) =>
          html`<li data-alternative=${i + 1} data-selected=${String(alt.selected)} data-status=${alt.status} class=${alt.selected ? 'selected' : ''}>
            <span class="preview">${alt.status === 'committed' ? alt.preview || '(no story text)' : `(${alt.status})`}</span>
            ${' '}${
              alt.selected
                ? html`<strong class="in-story">in the story</strong>`
                : alt.status === 'committed'
                  ? html`<button
                      type="button"
                      class="select"
                      aria-label=${`Select alternative ${i + 1}`}
                      disabled=${locked}
                      onClick=${() => onSelect(alt, i + 1)}
                    >
                      Select
                    </button>`
                  : null
            }
          </li>`,
      )}
    </ol>
  </section>`;
}
