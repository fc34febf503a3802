/** The console's entry: renders the app into the page (docs/architecture.md#console). */
import { render } from 'preact';
// First, so the pages' own stylesheets (imported by the app) come after the shared rules and win ties.
import './styles.css';
import { App } from './app';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
