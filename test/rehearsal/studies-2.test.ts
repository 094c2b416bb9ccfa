/** Part 2 of 2 of every study through the AWS rehearsal (test/helpers/study-rehearsals.ts). */
import { rehearseStudies } from '../helpers/study-rehearsals';

rehearseStudies(2, 2);
